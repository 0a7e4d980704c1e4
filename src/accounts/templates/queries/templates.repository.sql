-- The statements of src/accounts/templates/templates.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- template_send_state
select "status", "removed_at" as "removedAt", "parameter_counts" as "parameterCounts", "parameter_format" as "parameterFormat", "category", "components"
from "templates"
where "business_account_id" = $1 and "name" = $2 and "language" = $3;

-- template_languages
select "language"
from "templates"
where "business_account_id" = $1 and "name" = $2 and "removed_at" is null
order by "language";

-- template_decision
update "templates" as "t"
set "status" = $1, "status_reason" = $2, "status_updated_at" = $3, "updated_at" = now()
from "business_accounts" as "b"
where "b"."id" = "t"."business_account_id" and "b"."waba_id" = $4 and "t"."name" = $5 and "t"."language" = $6 and ("t"."status_updated_at" is null or "t"."status_updated_at" <= $7);

-- template_category
update "templates" as "t"
set "category" = $1, "category_updated_at" = $2, "updated_at" = now()
from "business_accounts" as "b"
where "b"."id" = "t"."business_account_id" and "b"."waba_id" = $3 and "t"."name" = $4 and "t"."language" = $5 and ("t"."category_updated_at" is null or "t"."category_updated_at" <= $6);

-- template_quality
update "templates" as "t"
set "quality_score" = $1, "quality_updated_at" = $2, "updated_at" = now()
from "business_accounts" as "b"
where "b"."id" = "t"."business_account_id" and "b"."waba_id" = $3 and "t"."name" = $4 and "t"."language" = $5 and ("t"."quality_updated_at" is null or "t"."quality_updated_at" <= $6);
