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

-- PhoneNumbersRepository.page
select "id", "business_account_id" as "businessAccountId", "phone_number_id" as "phoneNumberId", "display_phone_number" as "displayPhoneNumber", "verified_name" as "verifiedName", "quality_rating" as "qualityRating", "status", "code_verification_status" as "codeVerificationStatus", "name_status" as "nameStatus", "platform_type" as "platformType", "throughput_level" as "throughputLevel", "messaging_limit" as "messagingLimit", "quality_updated_at" as "qualityUpdatedAt", "name_updated_at" as "nameUpdatedAt", "removed_at" as "removedAt", "synced_at" as "syncedAt", "created_at" as "createdAt"
from "phone_numbers"
where "business_account_id" = $1
order by "removed_at" desc nulls first, "display_phone_number", "id"
limit $2
offset $3;

select count(*) as "n"
from "phone_numbers"
where "business_account_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- PhoneNumbersRepository.replaceAll (none listed)
select "id", "phone_number_id", "removed_at"
from "phone_numbers"
where "business_account_id" = $1;

-- PhoneNumbersRepository.replaceAll (one listed, one gone)
select "id", "phone_number_id", "removed_at"
from "phone_numbers"
where "business_account_id" = $1;

insert into "phone_numbers" ("id", "business_account_id", "phone_number_id", "display_phone_number", "verified_name", "quality_rating", "status", "code_verification_status", "name_status", "platform_type", "throughput_level", "removed_at", "synced_at")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
on conflict ("business_account_id", "phone_number_id")
do update set "display_phone_number" = "excluded"."display_phone_number", "verified_name" = "excluded"."verified_name", "quality_rating" = "excluded"."quality_rating", "status" = "excluded"."status", "code_verification_status" = "excluded"."code_verification_status", "name_status" = "excluded"."name_status", "platform_type" = "excluded"."platform_type", "throughput_level" = "excluded"."throughput_level", "removed_at" = $14, "synced_at" = "excluded"."synced_at";

update "phone_numbers"
set "removed_at" = $1
where "business_account_id" = $2 and "id" in ($3);
