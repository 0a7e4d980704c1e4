-- The statements of src/webhooks/deliveries/statements/console.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- list_deliveries_all
select *
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $1::timestamptz as "processedAt"
  from "webhook_inbox"
  where ("waba_ids" && $2::text[] and exists (
      select 1 as "one"
      from unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $6::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $7::timestamptz))))
  union all
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
  from "webhook_deliveries"
  where ("waba_ids" && $8::text[] and exists (
      select 1 as "one"
      from unnest($9::text[], $10::timestamptz[], $11::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $12::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $13::timestamptz))))) as "d"
order by "receivedAt" desc, "id" desc
limit $14
offset $15;

-- list_deliveries_waiting
select *
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $1::timestamptz as "processedAt"
  from "webhook_inbox"
  where (("waba_ids" && $2::text[] and exists (
        select 1 as "one"
        from unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) as "a"("waba", "since", "until")
        where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $6::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $7::timestamptz)))) and "status" = $8::text)) as "d"
order by "receivedAt" desc, "id" desc
limit $9
offset $10;

-- list_deliveries_processed
select *
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
  from "webhook_deliveries"
  where ("waba_ids" && $1::text[] and exists (
      select 1 as "one"
      from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz))))) as "d"
order by "receivedAt" desc, "id" desc
limit $7
offset $8;

-- count_deliveries_all
select cast(count(*) as integer) as "n"
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $1::timestamptz as "processedAt"
  from "webhook_inbox"
  where ("waba_ids" && $2::text[] and exists (
      select 1 as "one"
      from unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $6::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $7::timestamptz))))
  union all
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
  from "webhook_deliveries"
  where ("waba_ids" && $8::text[] and exists (
      select 1 as "one"
      from unnest($9::text[], $10::timestamptz[], $11::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $12::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $13::timestamptz))))) as "d";

-- count_deliveries_waiting
select cast(count(*) as integer) as "n"
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $1::timestamptz as "processedAt"
  from "webhook_inbox"
  where (("waba_ids" && $2::text[] and exists (
        select 1 as "one"
        from unnest($3::text[], $4::timestamptz[], $5::timestamptz[]) as "a"("waba", "since", "until")
        where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $6::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $7::timestamptz)))) and "status" = $8::text)) as "d";

-- count_deliveries_processed
select cast(count(*) as integer) as "n"
from (
  select "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", "processed_at" as "processedAt"
  from "webhook_deliveries"
  where ("waba_ids" && $1::text[] and exists (
      select 1 as "one"
      from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz))))) as "d";

-- replay_waiting_delivery
update "webhook_inbox"
set "status" = $1, "attempts" = $2, "last_error" = $3
where (("waba_ids" && $4::text[] and exists (
      select 1 as "one"
      from unnest($5::text[], $6::timestamptz[], $7::timestamptz[]) as "a"("waba", "since", "until")
      where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $8::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $9::timestamptz)))) and "id" = $10::bigint)
returning "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $11::timestamptz as "processedAt";

-- replay_processed_delivery
with "moved" as (
  delete from "webhook_deliveries"
  where (("waba_ids" && $1::text[] and exists (
        select 1 as "one"
        from unnest($2::text[], $3::timestamptz[], $4::timestamptz[]) as "a"("waba", "since", "until")
        where ("a"."waba" = any("waba_ids") and coalesce("original_received_at", "received_at") >= coalesce("a"."since", $5::timestamptz) and coalesce("original_received_at", "received_at") <= coalesce("a"."until", $6::timestamptz)))) and "id" = $7::bigint)
  returning "id", "raw_body", "signature", "waba_ids", "event_count", "received_at", "original_received_at", "redacted_at")
insert into "webhook_inbox" ("id", "raw_body", "signature", "waba_ids", "event_count", "received_at", "original_received_at", "redacted_at")
select "id", "raw_body", "signature", "waba_ids", "event_count", "received_at", "original_received_at", "redacted_at"
from "moved"
returning "id", "status", "attempts", "last_error" as "lastError", "event_count" as "eventCount", "waba_ids" as "wabaIds", coalesce("original_received_at", "received_at") as "receivedAt", $8::timestamptz as "processedAt";

-- deliveries_backlog_for_accounts
select "w"."waba" as "wabaId", cast(count(*) filter(
    where "d"."status" = $1) as integer) as "pending", cast(count(*) filter(
    where "d"."status" = $2) as integer) as "failed", min("d"."received_at") filter(
  where "d"."status" = $3) as "oldestPendingAt"
from "webhook_inbox" as "d"
cross join lateral unnest("d"."waba_ids"::text[]) as "w"("waba")
where ("d"."waba_ids" && $4::text[] and "w"."waba" = any($5::text[]))
group by "w"."waba";
