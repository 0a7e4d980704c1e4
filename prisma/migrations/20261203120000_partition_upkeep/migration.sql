-- Issue 40, item 2: what a week of `events` keeps on disk beyond its rows. Every index of `events` but the primary key
-- and the dedupe key starts with the account: each account appends at the end of its own range, and a page that
-- splits there keeps its left half, which no later insert fills (PostgreSQL fills a page past a split only for
-- heap-adjacent rows, which interleaved accounts never are), so those indexes are about half empty; the primary key of
-- `webhook_deliveries` holds two entries per processed delivery (the processing update's). Once a week has ended
-- nothing is added to its partitions, so the storage maintenance rebuilds the indexes of both tables' partitions once (REINDEX
-- CONCURRENTLY: reads and writes go on) and they come out full: 1,301 → 1,074 bytes per status event at 10 M
-- (bench/history/2026-12-03-ended-weeks-rebuilt.md).

-- Which ended weeks' partitions have had their indexes rebuilt (PartitionMaintenance.compact, docs/storage.md "A week
-- that has ended"): one row per partition, claimed before the rebuild (`started_at`) and finished after it; a claim
-- never finished (its process stopped) is taken over after a while. Rows of dropped partitions go with them.
CREATE TABLE "storage_compactions" (
    "partition" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "index_bytes_before" BIGINT,
    "index_bytes_after" BIGINT,

    CONSTRAINT "storage_compactions_pkey" PRIMARY KEY ("partition")
);

-- Claims the most recently ended partition of `parent` whose week ended before `ended_before` and whose indexes have
-- not been rebuilt (no row, or a claim older than `takeover` that never finished); returns its name, or NULL when
-- there is none. Two processes asking at once claim different partitions or none (the insert's conflict decides).
CREATE FUNCTION "storage_compaction_claim"(parent TEXT, ended_before TIMESTAMPTZ, takeover INTERVAL) RETURNS TEXT LANGUAGE plpgsql AS $$
DECLARE
  candidate TEXT;
  claimed TEXT;
BEGIN
  FOR candidate IN
    SELECT p.name FROM "storage_partitions"(parent) p
      LEFT JOIN "storage_compactions" c ON c."partition" = p.name
     WHERE p.upper_bound <= ended_before
       AND (c."partition" IS NULL OR (c.finished_at IS NULL AND c.started_at < now() - takeover))
     ORDER BY p.upper_bound DESC
  LOOP
    INSERT INTO "storage_compactions" ("partition", started_at) VALUES (candidate, now())
      ON CONFLICT ("partition") DO UPDATE SET started_at = now()
      WHERE "storage_compactions".finished_at IS NULL AND "storage_compactions".started_at < now() - takeover
      RETURNING "partition" INTO claimed;
    IF claimed IS NOT NULL THEN
      RETURN claimed;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- The invalid indexes of a partition: what a REINDEX CONCURRENTLY that was interrupted leaves (`…_ccnew`, `…_ccold`).
CREATE FUNCTION "storage_invalid_indexes"(part TEXT) RETURNS TABLE (name TEXT) LANGUAGE sql STABLE AS $$
  SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
   WHERE x.indrelid = part::regclass AND NOT x.indisvalid
$$;

-- Records a partition's rebuild as finished, with its index bytes before and after.
CREATE FUNCTION "storage_compaction_finish"(part TEXT, bytes_before BIGINT) RETURNS BIGINT LANGUAGE sql AS $$
  UPDATE "storage_compactions"
     SET finished_at = now(), index_bytes_before = bytes_before, index_bytes_after = pg_indexes_size(part::regclass)
   WHERE "partition" = part
  RETURNING index_bytes_after
$$;

-- A dropped partition's row goes with it (as in migration storage_partition_ddl, plus the DELETE).
CREATE OR REPLACE FUNCTION "storage_drop_detached"(parent TEXT, part TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
  IF parent NOT IN ('events', 'webhook_deliveries') OR part !~ ('^' || parent || '_(p[0-9]{8}|history)$') THEN
    RAISE EXCEPTION 'storage_drop_detached: % is not a partition name of %', part, parent;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = current_schema() AND c.relname = part AND c.relkind = 'r' AND NOT c.relispartition) THEN
    RETURN false;
  END IF;
  EXECUTE format('DROP TABLE IF EXISTS %I', part);
  DELETE FROM "storage_compactions" WHERE "partition" = part;
  RETURN true;
END $$;
