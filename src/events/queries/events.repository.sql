-- The statements of src/events/events.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- pending_events
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt"
from "events"
where ("delivery_id" = any($1::bigint[]) and not "processed" and "created_at" >= $2)
order by "id";

-- claim_events
update "events"
set "processed" = $1
where ("id" = any($2::bigint[]) and "created_at" >= $3 and not "processed")
returning "id";

-- count_event_wait
update "events"
set "attempts" = "attempts" + $1
where ("id" = any($2::bigint[]) and "created_at" >= $3 and not "processed");

-- status_history
select events_status_name("status", "status_other") as "status", "upstream_timestamp" as "upstreamTimestamp", "created_at" as "createdAt"
from "events"
where (hashtextextended("events"."message_id", 0) = hashtextextended($1::text, 0) AND "events"."message_id" = $2) and "waba_id" = $3 and "kind" = events_kind_code($4) and "created_at" >= $5
order by "upstream_timestamp" asc nulls last, "id" asc;

-- find_event_in_accounts
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts"
from "events"
where "id" = $1 and "waba_id" = any($2::text[]);

-- deliveries_with_waiting_statuses
select distinct "delivery_id" as "deliveryId"
from "events"
where (not "processed" and "kind" = events_kind_code($1) and "attempts" < $2 and "created_at" < $3 and "created_at" > $4)
limit $5;

-- events_feed_horizon
select cast("x"."horizon" as text) as "horizon"
from pg_snapshot_xmin(pg_current_snapshot()) as "x"(horizon);

-- retention_delete_event_counts
delete from "event_counts"
where "bucket" >= coalesce($1::timestamptz, $2::timestamptz) and "bucket" < $3;

-- EventsRepository.pageOfContact (no window)
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts"
from "events"
where "waba_id" = $1 and "id" > $2 and ("recipient" = any($3) or "user_id" = any($4) or (hashtextextended("events"."message_id", 0) = ANY (ARRAY(
        SELECT hashtextextended(v, 0)
        FROM unnest($5::text[]) v)) AND "events"."message_id" = ANY ($6::text[])))
order by "id"
limit $7;

-- EventsRepository.pageOfContact (a window)
select "id", "delivery_id" as "deliveryId", "waba_id" as "wabaId", "phone_number_id" as "phoneNumberId", events_type_name("event_type", "event_type_other") as "eventType", events_kind_name("kind") as "kind", events_status_name("status", "status_other") as "status", "recipient", "user_id" as "userId", "message_id" as "messageId", "upstream_timestamp" as "upstreamTimestamp", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "raw", "lean", "display_phone" as "displayPhone", "callback_id" as "callbackId", "created_at" as "createdAt", coalesce("title", events_status_title(events_status_name("status", "status_other"), "error_title", "error_code")) as "title", "processed", "attempts"
from "events"
where "waba_id" = $1 and "id" > $2 and ("recipient" = any($3) or "user_id" = any($4) or (hashtextextended("events"."message_id", 0) = ANY (ARRAY(
        SELECT hashtextextended(v, 0)
        FROM unnest($5::text[]) v)) AND "events"."message_id" = ANY ($6::text[]))) and "created_at" >= $7 and "created_at" <= $8
order by "id"
limit $9;

-- EventsRepository.eraseContactBatch
select "id", "created_at" as "createdAt"
from "events"
where "waba_id" = $1 and ("recipient" = any($2) or "user_id" = any($3) or (hashtextextended("events"."message_id", 0) = ANY (ARRAY(
        SELECT hashtextextended(v, 0)
        FROM unnest($4::text[]) v)) AND "events"."message_id" = ANY ($5::text[])))
limit $6;

delete from "events"
where "waba_id" = $1 and "id" = any($2) and "created_at" >= $3 and "created_at" <= $4;

-- EventsRepository.scrubContentBatch
select "id", "created_at" as "createdAt"
from "events"
where "waba_id" = any($1) and "created_at" < $2 and "created_at" >= $3 and "kind" in (events_kind_code($4), events_kind_code($5)) and not "raw" ? $6
limit $7;

update "events"
set "raw" = jsonb_strip_nulls(jsonb_build_object('id', "raw"->'id', 'from', "raw"->'from', 'to', "raw"->'to', 'from_user_id', "raw"->'from_user_id', 'to_user_id', "raw"->'to_user_id', 'type', "raw"->'type', 'timestamp', "raw"->'timestamp', 'metadata', "raw"->'metadata', 'contentScrubbed', true)), "title" = split_part("title", $1, $2)
where "id" = any($3) and "created_at" >= $4 and "created_at" < $5;
