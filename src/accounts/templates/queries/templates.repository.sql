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

-- TemplatesRepository.page (no filter)
select "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt"
from "templates"
where "business_account_id" = $1
order by "name", "language", "id"
limit $2
offset $3;

select count(*) as "n"
from "templates"
where "business_account_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- TemplatesRepository.page (every filter)
select "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt"
from "templates"
where "business_account_id" = $1 and "status" = $2 and "name" = $3
order by "name", "language", "id"
limit $4
offset $5;

select count(*) as "n"
from "templates"
where "business_account_id" = $1 and "status" = $2 and "name" = $3;
-- (stops here on the empty answer: NoResultError)

-- TemplatesRepository.replaceAll (none listed)
select "id", "name", "language", "removed_at"
from "templates"
where "business_account_id" = $1;

-- TemplatesRepository.replaceAll (one listed, one gone)
select "id", "name", "language", "removed_at"
from "templates"
where "business_account_id" = $1;

insert into "templates" ("id", "business_account_id", "upstream_id", "name", "language", "status", "category", "parameter_format", "components", "parameter_counts", "status_reason", "status_updated_at", "category_updated_at", "removed_at", "synced_at", "updated_at")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, now())
on conflict ("business_account_id", "name", "language")
do update set "upstream_id" = "excluded"."upstream_id", "status" = "excluded"."status", "category" = "excluded"."category", "parameter_format" = "excluded"."parameter_format", "components" = "excluded"."components", "parameter_counts" = "excluded"."parameter_counts", "status_reason" = $16, "status_updated_at" = "excluded"."status_updated_at", "category_updated_at" = "excluded"."category_updated_at", "removed_at" = $17, "synced_at" = "excluded"."synced_at", "updated_at" = now();

update "templates"
set "removed_at" = $1, "updated_at" = now()
where "business_account_id" = $2 and "id" in ($3);

-- TemplatesRepository.get
select "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt"
from "templates"
where "business_account_id" = $1 and "id" = $2;

-- TemplatesRepository.insertCreated
insert into "templates" ("id", "business_account_id", "name", "language", "upstream_id", "status", "category", "parameter_format", "components", "parameter_counts", "status_reason", "status_updated_at", "category_updated_at", "quality_score", "quality_updated_at", "removed_at", "synced_at", "updated_at")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, now())
on conflict ("business_account_id", "name", "language")
do update set "upstream_id" = $18, "status" = $19, "category" = $20, "parameter_format" = $21, "components" = $22, "parameter_counts" = $23, "status_reason" = $24, "status_updated_at" = $25, "category_updated_at" = $26, "quality_score" = $27, "quality_updated_at" = $28, "removed_at" = $29, "synced_at" = $30, "updated_at" = now()
returning "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- TemplatesRepository.markEdited (no change)
update "templates"
set "status" = $1, "status_reason" = $2, "status_updated_at" = $3, "updated_at" = now()
where "business_account_id" = $4 and "id" = $5
returning "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt";

-- TemplatesRepository.markEdited (every change)
update "templates"
set "components" = $1, "parameter_counts" = $2, "category" = $3, "category_updated_at" = $4, "status" = $5, "status_reason" = $6, "status_updated_at" = $7, "updated_at" = now()
where "business_account_id" = $8 and "id" = $9
returning "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt";

-- TemplatesRepository.markRemoved
update "templates"
set "removed_at" = $1, "updated_at" = now()
where "business_account_id" = $2 and "id" = $3
returning "id", "business_account_id" as "businessAccountId", "upstream_id" as "upstreamId", "name", "language", "status", "category", "parameter_format" as "parameterFormat", "components", "parameter_counts" as "parameterCounts", "status_reason" as "statusReason", "status_updated_at" as "statusUpdatedAt", "category_updated_at" as "categoryUpdatedAt", "quality_score" as "qualityScore", "quality_updated_at" as "qualityUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "updated_at" as "updatedAt";
