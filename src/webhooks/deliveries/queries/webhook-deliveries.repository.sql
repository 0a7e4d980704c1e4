-- The statements of src/webhooks/deliveries/webhook-deliveries.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- find_waiting_deliveries
select "id", "status", "raw_body" as "rawBody", "received_at" as "receivedAt", "event_count" as "eventCount"
from "webhook_inbox"
where "id" = any($1::bigint[])
order by "id";

-- find_recent_deliveries
select "id", "status", "raw_body" as "rawBody", "received_at" as "receivedAt", "event_count" as "eventCount"
from "webhook_deliveries"
where ("id" = any($1::bigint[]) and "received_at" >= now() - '1 day'::interval and "received_at" <= now() + '1 hour'::interval)
order by "id";

-- find_deliveries
select "id", "status", "raw_body" as "rawBody", "received_at" as "receivedAt", "event_count" as "eventCount"
from "webhook_deliveries"
where "id" = any($1::bigint[])
order by "id";

-- mark_deliveries_processed
with "moved" as (
  delete from "webhook_inbox" as "i" using unnest($1::bigint[], $2::int[]) as "v"("id", "events")
  where ("i"."id" = "v"."id" and "i"."id" = any($3::bigint[]))
  returning "i"."id", "i"."waba_ids", "i"."attempts", "v"."events", "i"."received_at", "i"."original_received_at", "i"."redacted_at", "i"."received_at" >= now() - '1 day'::interval as "recent")
insert into "webhook_deliveries" ("id", "raw_body", "signature", "waba_ids", "status", "attempts", "event_count", "received_at", "original_received_at", "processed_at", "redacted_at")
select "id", $4::bytea as "raw_body", $5 as "signature", "waba_ids", $6 as "status", "attempts" + $7 as "attempts", "events", case when "recent" = $8 then "received_at" else now() end as "received_at", case when "recent" = $9 then "original_received_at" else coalesce("original_received_at", "received_at") end as "original_received_at", now() as "processed_at", "redacted_at"
from "moved";

-- record_delivery_failure
update "webhook_inbox"
set "attempts" = "attempts" + $1, "last_error" = $2, "status" = case when $3::boolean then $4 else "status" end
where ("id" = any($5::bigint[]) and "status" = $6);

-- mark_delivery_dead_letter
update "webhook_inbox"
set "status" = $1, "last_error" = $2
where ("id" = any($3::bigint[]) and "status" = $4)
returning "id";

-- deliveries_still_received
select "id", "received_at" as "receivedAt", "batch_id" as "batchId"
from "webhook_inbox"
where ("status" = $1 and "received_at" < $2 and ("received_at", "id") > ($3::timestamptz, $4::bigint))
order by "received_at", "id"
limit $5;

-- deliveries_oldest_unprocessed
select min("received_at") as "at"
from "webhook_inbox"
where "status" = $1;

-- WebhookDeliveriesRepository.holding
select *
from (
  select "id", "received_at" as "receivedAt", "raw_body" as "rawBody"
  from "webhook_inbox"
  where "waba_ids" @> $1::text[] and "id" > $2 and (position($3::bytea in "raw_body") > 0)
  union all
  select "id", "received_at" as "receivedAt", "raw_body" as "rawBody"
  from "webhook_deliveries"
  where "waba_ids" @> $4::text[] and "id" > $5 and (position($6::bytea in "raw_body") > 0)) as "d"
order by "id"
limit $7;

-- WebhookDeliveriesRepository.rewriteBodies
update "webhook_inbox"
set "raw_body" = "r"."body", "redacted_at" = now()
from unnest($1::bigint[], $2::bytea[]) as "r"("id", "body")
where "webhook_inbox"."id" = "r"."id";

update "webhook_deliveries"
set "raw_body" = "r"."body", "redacted_at" = now()
from unnest($1::bigint[], $2::timestamptz[], $3::bytea[]) as "r"("id", "at", "body")
where "webhook_deliveries"."id" = "r"."id" and "webhook_deliveries"."received_at" = "r"."at" and "webhook_deliveries"."received_at" >= $4 and "webhook_deliveries"."received_at" <= $5;

-- WebhookDeliveriesRepository.scrubBodiesBatch
select "id", "received_at" as "receivedAt"
from "webhook_deliveries"
where "waba_ids" <@ $1::text[] and "received_at" < $2 and "received_at" >= $3 and "status" = $4 and octet_length("raw_body") > $5
limit $6;

update "webhook_deliveries"
set "raw_body" = $1, "redacted_at" = now()
where "id" = any($2) and "received_at" >= $3 and "received_at" < $4;

-- WebhookDeliveriesRepository.removeAll
delete from "webhook_inbox"
where "id" = any($1);

delete from "webhook_deliveries"
where "id" = any($1) and "received_at" >= $2 and "received_at" <= $3;
