-- The statements of src/events/statements/insert.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- lock_dedupe_keys
select cast(count(pg_advisory_xact_lock("keys"."h")) as integer) as "locked"
from (
  select distinct "u"."k" as "h"
  from unnest($1::bigint[]) as "u"("k")
  order by "h") as "keys";

-- events_stored_keys
select "s"."dedupe_key"
from "events" as "s"
where (encode("s"."dedupe_key", 'hex')::uuid = any($1::uuid[]) and "s"."created_at" >= coalesce($2::timestamptz, now()) - '8 days'::interval and "s"."created_at" < coalesce($3::timestamptz, now()) + '1 day'::interval);

-- insert_events
insert into "events" ("delivery_id", "waba_id", "phone_number_id", "event_type", "event_type_other", "kind", "title", "status", "status_other", "recipient", "user_id", "message_id", "upstream_timestamp", "error_code", "error_title", "error_detail", "raw", "lean", "display_phone", "callback_id", "dedupe_key", "processed", "attempts", "created_at")
select distinct on ("d"."dedupeHash") "d"."deliveryId", "d"."wabaId", "d"."phoneNumberId", "d"."eventTypeCode", "d"."eventTypeOther", "d"."kindCode", "d"."leanTitle", "d"."statusCode", "d"."statusOther", "d"."recipient", "d"."userId", "d"."messageId", "d"."upstreamTimestamp", "d"."errorCode", "d"."errorTitle", "d"."errorDetail", "d"."raw", "d"."lean", "d"."displayPhone", "d"."callbackId", "d"."dedupeHash", "d"."processed", "d"."attempts", coalesce($1::timestamptz, now()) as "createdAt"
from jsonb_to_recordset($2::jsonb) as "d"("deliveryId" bigint, "wabaId" text, "phoneNumberId" text, "eventTypeCode" int, "eventTypeOther" text, "kindCode" int, "leanTitle" text, "statusCode" int, "statusOther" text, "recipient" text, "userId" text, "messageId" text, "upstreamTimestamp" timestamptz, "errorCode" int, "errorTitle" text, "errorDetail" text, "raw" jsonb, "lean" int, "displayPhone" bigint, "callbackId" bigint, "dedupeHash" bytea, "processed" boolean, "attempts" int)
where "d"."dedupeHash" not in (
  select "s"."dedupe_key"
  from "events" as "s"
  where (encode("s"."dedupe_key", 'hex')::uuid = any($3::uuid[]) and "s"."created_at" >= coalesce($4::timestamptz, now()) - '8 days'::interval and "s"."created_at" < coalesce($5::timestamptz, now()) + '1 day'::interval))
order by "d"."dedupeHash"
returning "id", "dedupe_key" as "dedupeKey", "created_at" as "createdAt", tableoid::int8 as "partition";
