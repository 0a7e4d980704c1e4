-- The statements of src/events/statements/reads.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- events_page_<shape> (the shape with no optional parameter given)
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts"
from "events"
where "waba_id" = $1
order by "created_at" desc, "id" desc
limit $2
offset $3;

-- event_counts_<shape> (the shape with no optional parameter given)
select cast(coalesce(sum("count"), 0) as text) as "n"
from "event_counts"
where "waba_id" = $1;

-- events_count_<shape> (the shape with no optional parameter given)
select cast(count(*) as text) as "n"
from "events"
where "waba_id" = $1;

-- events_feed_<shape> (the shape with no optional parameter given)
with "h" as materialized (
  select "x"."horizon", (
    select "b"."xid"
    from "events" as "b"
    where "b"."waba_id" = $1 and "b"."xid" >= "x"."horizon"
    order by "b"."xid"
    limit $2) as "beyond"
  from pg_snapshot_xmin(pg_current_snapshot()) as "x"(horizon))
select cast("h"."horizon" as text) as "horizon", cast("h"."beyond" as text) as "beyond", "r".*
from "h"
left join lateral (
  select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts", "xid"
  from "events"
  where "waba_id" = $3 and ("xid", "id") > ($4::xid8, $5::bigint) and "xid" < "h"."horizon"
  order by "xid", "id"
  limit $6) as "r" on true
order by "r"."xid", "r"."id";
