-- The statements of src/campaigns/campaigns.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- campaign_acquire_lease
with "old" as (
  select "id", "lease_owner"
  from "campaigns"
  where "id" = $1
  for update)
update "campaigns" as "c"
set "lease_owner" = $2, "lease_until" = date_add(now(), make_interval(0, 0, 0, 0, 0, 0, $3))
from "old"
where "c"."id" = "old"."id" and "c"."status" = $4 and ("c"."lease_owner" is null or "c"."lease_owner" = $5 or "c"."lease_until" < now())
returning "c"."id", "c"."business_account_id" as "businessAccountId", "c"."name", "c"."phone_number_id" as "phoneNumberId", "c"."template_name" as "templateName", "c"."template_language" as "templateLanguage", "c"."template_category" as "templateCategory", "c"."upstream_api" as "upstreamApi", "c"."status", "c"."status_reason" as "statusReason", "c"."total", "c"."created_by_id" as "createdById", "c"."created_at" as "createdAt", "c"."updated_at" as "updatedAt", "c"."completed_at" as "completedAt", "c"."run", "old"."lease_owner" as "previousOwner";

-- campaign_renew_lease
update "campaigns"
set "lease_until" = date_add(now(), make_interval(0, 0, 0, 0, 0, 0, $1))
where "id" = $2 and "lease_owner" = $3
returning "status", "run";

-- campaign_lock_running
select "id"
from "campaigns"
where "id" = $1 and "status" = $2 and "lease_owner" = $3 and "run" = $4 for share;

-- campaign_complete
update "campaigns"
set "status" = $1, "completed_at" = now(), "updated_at" = now(), "lease_owner" = $2, "lease_until" = $3
where "id" = $4 and "status" = $5 and "lease_owner" = $6 and "run" = $7
returning "id";

-- campaign_pause_by_runner
update "campaigns"
set "status" = $1, "status_reason" = $2, "updated_at" = now()
where "id" = $3 and "status" = $4 and "lease_owner" = $5;

-- campaign_status
select "status"
from "campaigns"
where "id" = $1;

-- campaign_status_for_share
select "status"
from "campaigns"
where "id" = $1 for share;

-- campaign_hand_over_lease
update "campaigns"
set "lease_owner" = $1, "lease_until" = date_add(now(), make_interval(0, 0, 0, 0, 0, 0, $2))
where "id" = $3 and "lease_owner" = $4 and "status" = $5
returning "id";

-- campaign_release_lease
update "campaigns"
set "lease_owner" = $1, "lease_until" = $2
where "id" = $3 and "lease_owner" = $4;

-- campaigns_orphaned
select "id", "run"
from "campaigns"
where "status" = $1 and ("lease_until" < now() or ("lease_until" is null and "updated_at" < date_subtract(now(), make_interval(0, 0, 0, 0, 0, 0, $2))))
order by "id"
limit $3;

-- CampaignsRepository.create
insert into "campaigns" ("business_account_id", "name", "phone_number_id", "template_name", "template_language", "template_category", "upstream_api", "total", "created_by_id", "run")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
returning "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run";
-- (stops here on the empty answer: NoResultError)

-- CampaignsRepository.find (every campaign)
select "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run"
from "campaigns"
where "business_account_id" = $1 and "id" = $2;

-- CampaignsRepository.find (created since the hold)
select "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run"
from "campaigns"
where "business_account_id" = $1 and "created_at" >= $2 and "id" = $3;

-- CampaignsRepository.page (every campaign)
select "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run"
from "campaigns"
where "business_account_id" = $1
order by "created_at" desc, "id" desc
limit $2
offset $3;

select count(*) as "n"
from "campaigns"
where "business_account_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- CampaignsRepository.page (created since the hold)
select "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run"
from "campaigns"
where "business_account_id" = $1 and "created_at" >= $2
order by "created_at" desc, "id" desc
limit $3
offset $4;

select count(*) as "n"
from "campaigns"
where "business_account_id" = $1 and "created_at" >= $2;
-- (stops here on the empty answer: NoResultError)

-- CampaignsRepository.transition
update "campaigns"
set "status" = $1, "status_reason" = $2, "updated_at" = now(), "run" = "run", "completed_at" = now(), "lease_owner" = $3, "lease_until" = $4
where "id" = $5 and "business_account_id" = $6 and "status" = any($7)
returning "id", "business_account_id" as "businessAccountId", "name", "phone_number_id" as "phoneNumberId", "template_name" as "templateName", "template_language" as "templateLanguage", "template_category" as "templateCategory", "upstream_api" as "upstreamApi", "status", "status_reason" as "statusReason", "total", "created_by_id" as "createdById", "created_at" as "createdAt", "updated_at" as "updatedAt", "completed_at" as "completedAt", "run";

-- CampaignsRepository.cancelBefore
update "campaigns"
set "status" = $1, "status_reason" = $2, "updated_at" = now(), "completed_at" = now()
where "business_account_id" = $3 and "created_at" < $4 and "status" in ($5, $6)
returning "id";

-- CampaignsRepository.quotaUseLocked
select pg_advisory_xact_lock(hashtext($1)) as "locked";

select count(*) filter(
  where "c"."status" = $1) as "running", coalesce(sum("c"."total") filter(
    where "c"."created_at" >= $2), 0) as "recipients"
from "campaigns" as "c"
inner join "business_accounts" as "b" on "b"."id" = "c"."business_account_id"
where "b"."organization_id" = $3 and ("c"."status" = $4 or "c"."created_at" >= $5);
-- (stops here on the empty answer: NoResultError)
