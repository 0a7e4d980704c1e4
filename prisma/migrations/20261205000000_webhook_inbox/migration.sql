-- Issue 40, item 2 (the live week's bytes) and item 3 (the receive path): a delivery waits in a small table, the
-- weekly one keeps only what is processed (docs/storage.md, "The inbox").
--
-- The receiver inserted every delivery into this week's partition of `webhook_deliveries` (partition routing, the
-- primary key, the GIN of waba_ids, the partial index of unfinished ones) and the worker's processing update wrote a
-- second version of the row (not HOT): a live week carried both versions and their index entries. Now the receiver
-- inserts into `webhook_inbox` (its primary key and one small index), and the worker, in the transaction that stores
-- the delivery's events, moves it: DELETE FROM the inbox, INSERT the processed row (no body) into the weekly table.
-- Waiting deliveries and dead letters stay in the inbox until processed, so the retention never has to move them out
-- of a partition it drops. A replay moves a processed delivery back into the inbox.
--
-- Ids stay one sequence (webhook_deliveries_id_seq): a delivery keeps its id through the moves, and the queue's job
-- ids and events.delivery_id name it either side.

CREATE TABLE "webhook_inbox" (
    "id" BIGINT NOT NULL DEFAULT nextval('webhook_deliveries_id_seq'),
    "raw_body" BYTEA NOT NULL,
    "signature" TEXT NOT NULL,
    "waba_ids" TEXT[],
    "batch_id" TEXT,
    "status" TEXT NOT NULL DEFAULT 'received',
    "attempts" SMALLINT NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "event_count" INTEGER,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "original_received_at" TIMESTAMPTZ(3),
    "redacted_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_inbox_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_inbox_status_check" CHECK ("status" IN ('received', 'failed'))
);
-- The sweeper's keyset, the oldest waiting delivery, the console's backlog.
CREATE INDEX "webhook_inbox_status_received_at_idx" ON "webhook_inbox"("status", "received_at");

-- Every row is deleted within seconds of its insert: autovacuum unthrottled, after a fixed number of dead rows, so the
-- space is reused at the rate deliveries arrive (measured at 20,000 deliveries/s: 5.0 GB with the stock settings,
-- 1.15 GB with these; bench/history/2026-12-04-cluster-pipelines-and-vacuum-again.md).
ALTER TABLE "webhook_inbox" SET (
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 10000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 10000
);

-- The deliveries not processed yet (waiting, dead letters) move into the inbox with their ids and times.
WITH moved AS (
    DELETE FROM "webhook_deliveries" WHERE "status" IN ('received', 'failed')
    RETURNING "id", "raw_body", "signature", "waba_ids", "batch_id", "status", "attempts", "last_error", "event_count",
        "received_at", "original_received_at", "redacted_at"
)
INSERT INTO "webhook_inbox" ("id", "raw_body", "signature", "waba_ids", "batch_id", "status", "attempts", "last_error",
    "event_count", "received_at", "original_received_at", "redacted_at")
SELECT * FROM moved;

-- The weekly table now holds processed deliveries only: no index of unfinished ones.
DROP INDEX "webhook_deliveries_unfinished_idx";
ALTER TABLE "webhook_deliveries" ALTER COLUMN "status" SET DEFAULT 'processed';
