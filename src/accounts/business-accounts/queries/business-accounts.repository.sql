-- The statements of src/accounts/business-accounts/business-accounts.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- business_account_send_state
select "credentials_valid" as "credentialsValid", "credentials_error" as "credentialsError", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "marketing_messages_status" as "marketingMessagesStatus"
from "business_accounts"
where "id" = $1;

-- business_accounts_lock_standings
select "id", "waba_id" as "wabaId", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "updatedAt", "standing_times" as "times"
from "business_accounts"
where "waba_id" = any($1)
order by "id"
for update;

-- business_accounts_write_standings
update "business_accounts" as "b"
set "ban_state" = "v"."banState", "ban_date" = "v"."banDate", "restrictions" = "v"."restrictions", "violation_type" = "v"."violationType", "pricing_tiers" = "v"."pricingTiers", "alerts" = "v"."alerts", "standing_updated_at" = "v"."updatedAt", "standing_times" = "v"."times", "updated_at" = now()
from jsonb_to_recordset($1::jsonb) as "v"("id" uuid, "banState" text, "banDate" text, "restrictions" jsonb, "violationType" text, "pricingTiers" jsonb, "alerts" jsonb, "updatedAt" timestamptz, "times" jsonb)
where "b"."id" = "v"."id";

-- business_accounts_marketing_onboarded
update "business_accounts" as "b"
set "marketing_messages_status" = $1, "marketing_messages_updated_at" = "v"."at", "updated_at" = now()
from unnest($2::text[], $3::timestamptz[]) as "v"("waba", "at")
where "b"."waba_id" = "v"."waba" and ("b"."marketing_messages_updated_at" is null or "b"."marketing_messages_updated_at" <= "v"."at");
