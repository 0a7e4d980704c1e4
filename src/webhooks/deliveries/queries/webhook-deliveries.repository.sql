-- The statements of src/webhooks/deliveries/webhook-deliveries.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

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
update "webhook_deliveries" as "d"
set "status" = $1, "processed_at" = now(), "event_count" = "v"."events", "raw_body" = $2, "signature" = $3, "batch_id" = $4, "last_error" = $5, "attempts" = "d"."attempts" + $6
from unnest($7::bigint[], $8::int[]) as "v"("id", "events")
where ("d"."id" = "v"."id" and "d"."id" = any($9::bigint[]) and "d"."status" <> $10 and "d"."received_at" >= $11);

-- record_delivery_failure
update "webhook_deliveries"
set "attempts" = "attempts" + $1, "last_error" = $2, "status" = case when $3::boolean then $4 else "status" end
where ("id" = any($5::bigint[]) and "status" = $6);

-- mark_delivery_dead_letter
update "webhook_deliveries"
set "status" = $1, "last_error" = $2
where ("id" = any($3::bigint[]) and "status" = $4)
returning "id";

-- deliveries_still_received
select "id", "received_at" as "receivedAt", "batch_id" as "batchId"
from "webhook_deliveries"
where ("status" = $1 and "received_at" < $2 and ("received_at", "id") > ($3::timestamptz, $4::bigint))
order by "received_at", "id"
limit $5;

-- deliveries_oldest_unprocessed
select min("received_at") as "at"
from "webhook_deliveries"
where "status" = $1;

-- retention_keep_unfinished_deliveries
update "webhook_deliveries"
set "original_received_at" = coalesce("original_received_at", "received_at"), "received_at" = now()
where ("status" in ($1, $2) and "received_at" >= coalesce($3::timestamptz, $4::timestamptz) and "received_at" < $5);

-- list_deliveries_all
select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
from "webhook_deliveries"
where ("waba_ids" && $1::text[] and exists (
    select 1 as "one"
    from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
    where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz))))
order by coalesce("original_received_at", "received_at") desc, "id" desc
limit $7
offset $8;

-- list_deliveries_status
select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
from "webhook_deliveries"
where (("waba_ids" && $1::text[] and exists (
      select 1 as "one"
      from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz)))) and "status" = $7::text)
order by coalesce("original_received_at", "received_at") desc, "id" desc
limit $8
offset $9;

-- count_deliveries_all
select cast(count(*) as integer) as "n"
from "webhook_deliveries"
where ("waba_ids" && $1::text[] and exists (
    select 1 as "one"
    from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
    where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz))));

-- count_deliveries_status
select cast(count(*) as integer) as "n"
from "webhook_deliveries"
where (("waba_ids" && $1::text[] and exists (
      select 1 as "one"
      from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz)))) and "status" = $7::text);

-- replay_delivery
update "webhook_deliveries"
set "status" = $1, "attempts" = $2, "last_error" = $3, "processed_at" = $4
where (("waba_ids" && $5::text[] and exists (
      select 1 as "one"
      from unnest($6::text[], $7::timestamptz[], $8::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $9::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $10::timestamptz)))) and "id" = $11::bigint)
returning "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt";

-- deliveries_backlog_for_accounts
select "w"."waba" as "wabaId", cast(count(*) filter(
    where "d"."status" = $1) as integer) as "pending", cast(count(*) filter(
    where "d"."status" = $2) as integer) as "failed", min("d"."received_at") filter(
  where "d"."status" = $3) as "oldestPendingAt"
from "webhook_deliveries" as "d"
cross join lateral unnest("d"."waba_ids"::text[]) as "w"("waba")
where ("d"."status" in ($4, $5) and "d"."waba_ids" && $6::text[] and "w"."waba" = any($7::text[]))
group by "w"."waba";

-- WebhookDeliveriesRepository.holding
select "id", "received_at" as "receivedAt", "raw_body" as "rawBody"
from "webhook_deliveries"
where "waba_ids" @> $1::text[] and "id" > $2 and (position($3::bytea in "raw_body") > 0)
order by "id"
limit $4;

-- WebhookDeliveriesRepository.rewriteBodies
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
delete from "webhook_deliveries"
where "id" = any($1) and "received_at" >= $2 and "received_at" <= $3;
