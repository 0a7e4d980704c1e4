-- The statements of src/messages/statements/statuses.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- messages_follow_users
update "messages" as "m"
set "user_id" = "u"."nu"
from unnest($1::text[], $2::text[], $3::text[]) as "u"("waba", "old", "nu"), "business_accounts" as "b"
where "b"."waba_id" = "u"."waba" and "m"."business_account_id" = "b"."id" and "m"."user_id" = "u"."old";

-- lock_messages_for_statuses
select "m"."id", "b"."waba_id" as "wabaId", "m"."upstream_message_id" as "upstreamMessageId", "m"."status", "m"."error_category" as "errorCategory", "m"."error_code" as "errorCode", "m"."error_title" as "errorTitle", "m"."error_detail" as "errorDetail", "m"."sent_at" as "sentAt", "m"."delivered_at" as "deliveredAt", "m"."read_at" as "readAt", "m"."failed_at" as "failedAt", "m"."pricing_model" as "pricingModel", "m"."pricing_category" as "pricingCategory", "m"."pricing_type" as "pricingType", "m"."pricing_billable" as "pricingBillable"
from "messages" as "m"
inner join "business_accounts" as "b" on "b"."id" = "m"."business_account_id"
where "m"."id" = any(array((
      select "x"."id"
      from "messages" as "x"
      where "x"."upstream_message_id" = any($1::text[])
      union all
      select "x"."id"
      from "messages" as "x"
      where ("x"."id" = any($2::bigint[]) and "x"."upstream_message_id" is null))))
order by "m"."id"
for update of "m";

-- write_message_statuses
update "messages" as "m"
set "status" = "v"."status", "error_category" = "v"."errorCategory", "error_code" = "v"."errorCode", "error_title" = "v"."errorTitle", "error_detail" = "v"."errorDetail", "sent_at" = "v"."sentAt", "delivered_at" = "v"."deliveredAt", "read_at" = "v"."readAt", "failed_at" = "v"."failedAt", "upstream_message_id" = "v"."upstreamMessageId", "pricing_model" = "v"."pricingModel", "pricing_category" = "v"."pricingCategory", "pricing_type" = "v"."pricingType", "pricing_billable" = "v"."pricingBillable", "updated_at" = now()
from jsonb_to_recordset($1::jsonb) as "v"("id" bigint, "status" text, "errorCategory" text, "errorCode" int, "errorTitle" text, "errorDetail" text, "sentAt" timestamptz, "deliveredAt" timestamptz, "readAt" timestamptz, "failedAt" timestamptz, "upstreamMessageId" text, "pricingModel" text, "pricingCategory" text, "pricingType" text, "pricingBillable" boolean)
where ("m"."id" = "v"."id" and "m"."id" = any($2::bigint[]));
