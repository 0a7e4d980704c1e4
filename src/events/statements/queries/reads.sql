-- The statements of src/events/statements/reads.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- events_page_<shape> (the shape with no optional parameter given)
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts"
from "events"
where (hashtextextended("events"."waba_id", 0) = hashtextextended($1::text, 0) AND "events"."waba_id" = $2)
order by "created_at" desc, "id" desc
limit $3
offset $4;

-- event_counts_<shape> (the shape with no optional parameter given)
select cast(coalesce(sum("count"), 0) as text) as "n"
from "event_counts"
where "waba_id" = $1;

-- events_count_<shape> (the shape with no optional parameter given)
select cast(count(*) as text) as "n"
from "events"
where (hashtextextended("events"."waba_id", 0) = hashtextextended($1::text, 0) AND "events"."waba_id" = $2);

-- events_feed_<shape> (the shape with no optional parameter given)
with "h" as materialized (
  select "x"."horizon", (
    select "b"."xid"
    from "events" as "b"
    where (hashtextextended("b"."waba_id", 0) = hashtextextended($1::text, 0) AND "b"."waba_id" = $2) and "b"."xid" >= "x"."horizon"
    order by "b"."xid"
    limit $3) as "beyond"
  from pg_snapshot_xmin(pg_current_snapshot()) as "x"(horizon))
select cast("h"."horizon" as text) as "horizon", cast("h"."beyond" as text) as "beyond", "r".*
from "h"
left join lateral (
  select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts", "xid"
  from "events"
  where (hashtextextended("events"."waba_id", 0) = hashtextextended($4::text, 0) AND "events"."waba_id" = $5) and ("xid", "id") > ($6::xid8, $7::bigint) and "xid" < "h"."horizon"
  order by "xid", "id"
  limit $8) as "r" on true
order by "r"."xid", "r"."id";
