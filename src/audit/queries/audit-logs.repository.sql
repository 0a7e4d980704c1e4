-- The statements of src/audit/audit-logs.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- AuditLogsRepository.append
insert into "audit_logs" ("organization_id", "operator_id", "operator_email", "action", "target_type", "target_id", "details")
values ($1, $2, $3, $4, $5, $6, $7);

-- AuditLogsRepository.page
select "id", "organization_id" as "organizationId", "operator_id" as "operatorId", "operator_email" as "operatorEmail", "action", "target_type" as "targetType", "target_id" as "targetId", "details", "created_at" as "createdAt"
from "audit_logs"
where "organization_id" = $1
order by "created_at" desc, "id" desc
limit $2
offset $3;

select count(*) as "n"
from "audit_logs"
where "organization_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- AuditLogsRepository.replaceInDetails
select "id", "details"
from "audit_logs"
where "organization_id" = $1 and strpos(cast("details" as text), $2) > $3;

update "audit_logs"
set "details" = $1
where "id" = $2;
