-- The statements of src/accounts/phone-numbers/phone-numbers.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- phone_number_send_state
select "status", "removed_at" as "removedAt", "throughput_level" as "throughputLevel"
from "phone_numbers"
where "business_account_id" = $1 and "phone_number_id" = $2;

-- phone_numbers_apply_quality
with "locked" as (
  select "p"."id", "v"."messagingLimit", "v"."flag", "v"."qualityRating", "v"."throughputLevel", "v"."at"
  from jsonb_to_recordset($1::jsonb) as "v"("wabaId" text, "displayDigits" text, "messagingLimit" text, "flag" text, "qualityRating" text, "throughputLevel" text, "at" timestamptz), "phone_numbers" as "p"
  inner join "business_accounts" as "b" on "b"."id" = "p"."business_account_id"
  where "b"."waba_id" = "v"."wabaId" and regexp_replace("p"."display_phone_number", $2, $3, $4) = "v"."displayDigits" and ("p"."quality_updated_at" is null or "p"."quality_updated_at" <= "v"."at")
  order by "p"."id"
  for update of "p")
update "phone_numbers" as "p"
set "messaging_limit" = coalesce("l"."messagingLimit", "p"."messaging_limit"), "status" = case "l"."flag" when $5 then $6 when $7 then case when "p"."status" = $8 then $9 else "p"."status" end else "p"."status" end, "quality_rating" = coalesce("l"."qualityRating", "p"."quality_rating"), "throughput_level" = coalesce("l"."throughputLevel", "p"."throughput_level"), "quality_updated_at" = "l"."at"
from "locked" as "l"
where "p"."id" = "l"."id";

-- phone_numbers_apply_names
with "locked" as (
  select "p"."id", "v"."nameStatus", "v"."verifiedName", "v"."at"
  from jsonb_to_recordset($1::jsonb) as "v"("wabaId" text, "displayDigits" text, "nameStatus" text, "verifiedName" text, "at" timestamptz), "phone_numbers" as "p"
  inner join "business_accounts" as "b" on "b"."id" = "p"."business_account_id"
  where "b"."waba_id" = "v"."wabaId" and regexp_replace("p"."display_phone_number", $2, $3, $4) = "v"."displayDigits" and ("p"."name_updated_at" is null or "p"."name_updated_at" <= "v"."at")
  order by "p"."id"
  for update of "p")
update "phone_numbers" as "p"
set "name_status" = "l"."nameStatus", "verified_name" = coalesce("l"."verifiedName", "p"."verified_name"), "name_updated_at" = "l"."at"
from "locked" as "l"
where "p"."id" = "l"."id";
