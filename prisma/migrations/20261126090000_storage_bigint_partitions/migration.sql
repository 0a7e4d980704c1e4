-- Storage for years and billions (issue 24): 64-bit ids, weekly partitions of `events` and `webhook_deliveries`,
-- retention by dropping whole partitions, dedupe that holds across partitions. docs/storage.md explains the design
-- and the measurements behind it; bench/RESULTS.md ("Storage") has the figures.
--
-- Upgrade path: this migration converts a database of the previous shape in place (one transaction, like every
-- migration): messages and audit_logs are rewritten with bigint ids; events and webhook_deliveries are copied
-- into their partitioned successors (ids, xids and timestamps kept, so cursors and links stay valid) and the old
-- tables dropped. Everything stored before the current week goes into one `…_history` partition, which the
-- retention drops once all of it is past the retention period. Time per million rows: docs/storage.md.

-- 1. 64-bit ids for the tables that grow without bound. ALTER SEQUENCE … AS bigint also raises the sequence's
--    maximum (it was the int maximum).
ALTER TABLE "messages" ALTER COLUMN "id" TYPE BIGINT;
ALTER SEQUENCE "messages_id_seq" AS BIGINT;
ALTER TABLE "audit_logs" ALTER COLUMN "id" TYPE BIGINT;
ALTER SEQUENCE "audit_logs_id_seq" AS BIGINT;

-- 2. The partition period: weeks starting Monday 00:00 UTC. One function decides it for the partitions, the
--    event_counts buckets and the maintenance task (src/core/prisma/partitions.ts). date_bin is immutable, so the
--    function is inlined into the counts triggers (an extract(epoch …) body is not: 17× slower per row).
CREATE FUNCTION "storage_period_start"(ts TIMESTAMPTZ) RETURNS TIMESTAMPTZ LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT date_bin('7 days', ts, TIMESTAMPTZ '2000-01-03 00:00:00+00')
$$;

-- Creates the missing weekly partitions of `parent` covering [from_ts, through], each as a plain table attached
-- afterwards: ATTACH PARTITION takes SHARE UPDATE EXCLUSIVE on the parent, which never waits for nor blocks the
-- inserts and reads of the live partition (CREATE TABLE … PARTITION OF would take ACCESS EXCLUSIVE). Serialized
-- by an advisory lock so that two processes running it at once do not race. Returns how many it made.
CREATE FUNCTION "storage_ensure_partitions"(parent TEXT, from_ts TIMESTAMPTZ, through TIMESTAMPTZ) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  start TIMESTAMPTZ := "storage_period_start"(from_ts);
  made INTEGER := 0;
  part TEXT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('storage_ensure_partitions'), hashtext(parent));
  WHILE start <= through LOOP
    part := parent || '_p' || to_char(start AT TIME ZONE 'UTC', 'YYYYMMDD');
    IF to_regclass(format('%I', part)) IS NULL AND NOT EXISTS (
      -- A partition of another name (the history partition) may already cover this week.
      SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = parent::regclass
         AND pg_get_expr(c.relpartbound, c.oid) LIKE '%MINVALUE%'
         AND "storage_partition_upper"(c.oid) > start) THEN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', part, parent);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, start, start + INTERVAL '7 days');
      made := made + 1;
    END IF;
    start := start + INTERVAL '7 days';
  END LOOP;
  RETURN made;
END $$;

-- The upper bound of a range partition (its bound expression is "FOR VALUES FROM (…) TO ('…')").
CREATE FUNCTION "storage_partition_upper"(part OID) RETURNS TIMESTAMPTZ LANGUAGE sql STABLE AS $$
  SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::timestamptz FROM pg_class c WHERE c.oid = part
$$;

-- The lower bound (NULL for MINVALUE).
CREATE FUNCTION "storage_partition_lower"(part OID) RETURNS TIMESTAMPTZ LANGUAGE sql STABLE AS $$
  SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\)'))[1]::timestamptz FROM pg_class c WHERE c.oid = part
$$;

-- Every partition of `parent` with its bounds, oldest first.
CREATE FUNCTION "storage_partitions"(parent TEXT) RETURNS TABLE (name TEXT, lower_bound TIMESTAMPTZ, upper_bound TIMESTAMPTZ) LANGUAGE sql STABLE AS $$
  SELECT c.relname::text, "storage_partition_lower"(c.oid), "storage_partition_upper"(c.oid)
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
   WHERE i.inhparent = parent::regclass
   ORDER BY 3
$$;

-- 3. events, partitioned by created_at (the time it was stored: always now, whatever Meta's timestamp says, so a
--    partition for it exists whenever the maintenance task has run in the last weeks). The primary key must hold
--    the partition key. dedupe_key is no longer unique by index (PostgreSQL refuses a unique index without the
--    partition key): the worker takes a transaction-level advisory lock per key and stores only keys not stored in
--    the last 8 days (EventsRepository.insert), which holds across partitions.
ALTER TABLE "events" RENAME TO "events_legacy";
ALTER TABLE "events_legacy" RENAME CONSTRAINT "events_pkey" TO "events_legacy_pkey";
ALTER SEQUENCE "events_id_seq" OWNED BY NONE;
ALTER SEQUENCE "events_id_seq" AS BIGINT;
DROP TRIGGER "event_counts_insert" ON "events_legacy";
DROP TRIGGER "event_counts_delete" ON "events_legacy";
DROP TRIGGER "event_counts_update" ON "events_legacy";
DROP TRIGGER "event_counts_truncate" ON "events_legacy";
DROP TRIGGER "events_feed_notify" ON "events_legacy";

CREATE TABLE "events" (
    "id" BIGINT NOT NULL DEFAULT nextval('events_id_seq'),
    "delivery_id" BIGINT NOT NULL,
    "waba_id" TEXT NOT NULL,
    "phone_number_id" TEXT,
    "event_type" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "status" TEXT,
    "recipient" TEXT,
    "user_id" TEXT,
    "message_id" TEXT,
    "upstream_timestamp" TIMESTAMPTZ(3),
    "error_code" INTEGER,
    "error_title" TEXT,
    "error_detail" TEXT,
    "raw" JSONB NOT NULL,
    "pricing" JSONB,
    "dedupe_key" TEXT NOT NULL,
    "processed" BOOLEAN NOT NULL DEFAULT false,
    "processed_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "xid" XID8 NOT NULL DEFAULT pg_current_xact_id(),
    CONSTRAINT "events_pkey" PRIMARY KEY ("id", "created_at")
) PARTITION BY RANGE ("created_at");
ALTER SEQUENCE "events_id_seq" OWNED BY "events"."id";

-- 4. webhook_deliveries, partitioned by received_at. Dead letters and deliveries still waiting are never dropped
--    with their partition: the retention moves them into the current week first (received_at becomes the time of
--    the move, original_received_at keeps when Meta delivered it; the API shows the latter).
ALTER TABLE "webhook_deliveries" RENAME TO "webhook_deliveries_legacy";
ALTER TABLE "webhook_deliveries_legacy" RENAME CONSTRAINT "webhook_deliveries_pkey" TO "webhook_deliveries_legacy_pkey";
ALTER SEQUENCE "webhook_deliveries_id_seq" OWNED BY NONE;
ALTER SEQUENCE "webhook_deliveries_id_seq" AS BIGINT;

CREATE TABLE "webhook_deliveries" (
    "id" BIGINT NOT NULL DEFAULT nextval('webhook_deliveries_id_seq'),
    "raw_body" BYTEA NOT NULL,
    "signature" TEXT NOT NULL,
    "waba_ids" TEXT[],
    "batch_id" TEXT,
    "status" TEXT NOT NULL DEFAULT 'received',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "event_count" INTEGER,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "original_received_at" TIMESTAMPTZ(3),
    "processed_at" TIMESTAMPTZ(3),
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id", "received_at")
) PARTITION BY RANGE ("received_at");
ALTER SEQUENCE "webhook_deliveries_id_seq" OWNED BY "webhook_deliveries"."id";

-- 5. Partitions: everything before this week in one history partition (MINVALUE … this week), then this week
--    and four weeks ahead. The maintenance task keeps four weeks ahead from now on.
DO $$
DECLARE
  this_week TIMESTAMPTZ := "storage_period_start"(now());
BEGIN
  EXECUTE format('CREATE TABLE "events_history" PARTITION OF "events" FOR VALUES FROM (MINVALUE) TO (%L)', this_week);
  EXECUTE format('CREATE TABLE "webhook_deliveries_history" PARTITION OF "webhook_deliveries" FOR VALUES FROM (MINVALUE) TO (%L)', this_week);
  PERFORM "storage_ensure_partitions"('events', this_week, this_week + INTERVAL '28 days');
  PERFORM "storage_ensure_partitions"('webhook_deliveries', this_week, this_week + INTERVAL '28 days');
END $$;

-- 6. The rows of the old shape, as they were (ids, xids, timestamps). Indexes are built after the copy (faster
--    than maintaining them row by row).
INSERT INTO "events" ("id", "delivery_id", "waba_id", "phone_number_id", "event_type", "kind", "title", "status", "recipient", "user_id",
                      "message_id", "upstream_timestamp", "error_code", "error_title", "error_detail", "raw", "pricing", "dedupe_key",
                      "processed", "processed_at", "attempts", "created_at", "xid")
SELECT "id", "delivery_id", "waba_id", "phone_number_id", "event_type", "kind", "title", "status", "recipient", "user_id",
       "message_id", "upstream_timestamp", "error_code", "error_title", "error_detail", "raw", "pricing", "dedupe_key",
       "processed", "processed_at", "attempts", "created_at", "xid"
  FROM "events_legacy";
DROP TABLE "events_legacy";

INSERT INTO "webhook_deliveries" ("id", "raw_body", "signature", "waba_ids", "batch_id", "status", "attempts", "last_error", "event_count",
                                  "received_at", "processed_at")
SELECT "id", "raw_body", "signature", "waba_ids", "batch_id", "status", "attempts", "last_error", "event_count", "received_at", "processed_at"
  FROM "webhook_deliveries_legacy";
DROP TABLE "webhook_deliveries_legacy";

-- Indexes on the parents (each partition gets its own, and so does every partition attached later).
CREATE INDEX "events_dedupe_key_created_at_idx" ON "events" ("dedupe_key", "created_at");
CREATE INDEX "events_waba_id_created_at_id_idx" ON "events" ("waba_id", "created_at" DESC, "id" DESC);
CREATE INDEX "events_waba_id_xid_id_idx" ON "events" ("waba_id", "xid", "id");
CREATE INDEX "events_waba_id_kind_created_at_id_idx" ON "events" ("waba_id", "kind", "created_at" DESC, "id" DESC);
CREATE INDEX "events_waba_id_status_created_at_id_idx" ON "events" ("waba_id", "status", "created_at" DESC, "id" DESC);
CREATE INDEX "events_waba_id_recipient_created_at_id_idx" ON "events" ("waba_id", "recipient", "created_at" DESC, "id" DESC);
CREATE INDEX "events_message_id_idx" ON "events" ("message_id");
CREATE INDEX "events_unprocessed_delivery_idx" ON "events" ("delivery_id") WHERE NOT "processed";
CREATE INDEX "events_unprocessed_created_at_idx" ON "events" ("created_at") WHERE NOT "processed";
CREATE INDEX "events_waba_id_user_id_created_at_id_idx" ON "events" ("waba_id", "user_id", "created_at" DESC, "id" DESC)
  WHERE "user_id" IS NOT NULL;

CREATE INDEX "webhook_deliveries_status_received_at_idx" ON "webhook_deliveries" ("status", "received_at");
CREATE INDEX "webhook_deliveries_waba_ids_idx" ON "webhook_deliveries" USING GIN ("waba_ids");

-- 7. event_counts per week (`bucket`, the week of the event's created_at): a retention drop deletes its weeks'
--    counts in the same transaction as the partition, so the totals always match what is stored, with no scan of
--    the dropped rows. Readers add the buckets and shards up.
DROP TABLE "event_counts";
CREATE TABLE "event_counts" (
    "waba_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT '',
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "shard" SMALLINT NOT NULL,
    "count" BIGINT NOT NULL,
    CONSTRAINT "event_counts_pkey" PRIMARY KEY ("waba_id", "kind", "status", "bucket", "shard")
);
INSERT INTO "event_counts" ("waba_id", "kind", "status", "bucket", "shard", "count")
SELECT "waba_id", "kind", COALESCE("status", ''), "storage_period_start"("created_at"), 0, count(*) FROM "events" GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE FUNCTION "event_counts_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT n."waba_id", n."kind", COALESCE(n."status", ''), "storage_period_start"(n."created_at"), "event_counts_shard"(), count(*)
    FROM new_rows n
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "event_counts_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT o."waba_id", o."kind", COALESCE(o."status", ''), "storage_period_start"(o."created_at"), "event_counts_shard"(), -count(*)
    FROM old_rows o
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

-- Changes of counted columns: statement level with both transition tables, because an UPDATE of created_at that
-- moves a row to another partition is a DELETE and an INSERT underneath, which fires neither the row-level UPDATE
-- trigger nor the statement-level INSERT/DELETE ones; the UPDATE transition tables do hold it. Transition tables
-- cannot go with a column list, so this fires on every UPDATE of events: only the rare paths update events (the
-- claim of events stored unprocessed, a wait counted), and the deltas of rows whose counted columns did not
-- change cancel out (HAVING), so those write nothing.
DROP FUNCTION "event_counts_after_update"();
CREATE FUNCTION "event_counts_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT d."waba_id", d."kind", d."status", d."bucket", "event_counts_shard"(), sum(d."delta")
    FROM (SELECT o."waba_id", o."kind", COALESCE(o."status", '') AS "status", "storage_period_start"(o."created_at") AS "bucket", -1 AS "delta"
            FROM old_rows o
          UNION ALL
          SELECT n."waba_id", n."kind", COALESCE(n."status", ''), "storage_period_start"(n."created_at"), 1
            FROM new_rows n) AS d
   GROUP BY 1, 2, 3, 4
  HAVING sum(d."delta") <> 0
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE TRIGGER "event_counts_insert" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_insert"();
CREATE TRIGGER "event_counts_delete" AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_delete"();
CREATE TRIGGER "event_counts_update" AFTER UPDATE ON "events"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_update"();
CREATE TRIGGER "event_counts_truncate" AFTER TRUNCATE ON "events"
  FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_truncate"();
CREATE TRIGGER "events_feed_notify" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "events_feed_notify"();

ANALYZE "events";
ANALYZE "webhook_deliveries";
