-- Issue 40, item 2: what a week of `events` and `webhook_deliveries` keeps on disk beyond its rows, once the week has
-- ended (nothing is added to its partitions then: rows are stored in the week of "now").
--
-- 1. Half-empty index pages. Every index of `events` but the primary key and the dedupe key starts with the account:
--    each account appends at the end of its own range, and a page that splits there keeps its left half, which no
--    later insert fills (PostgreSQL fills a page past a split only for heap-adjacent rows, which interleaved accounts
--    never are). The primary key of `webhook_deliveries` holds two entries per processed delivery (the processing
--    update's). The storage maintenance rebuilds the indexes of an ended week's partitions once (REINDEX
--    CONCURRENTLY, from the service: reads and writes go on) and they come out full.
-- 2. The space the processing update leaves in `webhook_deliveries`: the receiver stores a delivery with its bytes
--    (≈ 700 B for one status), the processed mark empties them, and the old row's space is only reused by later
--    deliveries of the same week if vacuum frees it in time, which at millions of rows a week it does not (419 B of heap
--    per delivery at 10 M against ≈ 130 B of live row). The maintenance rewrites an ended week's partition of
--    `webhook_deliveries` once (storage_rewrite_partition).
-- bench/history/2026-12-03-ended-weeks-rebuilt.md has the figures.

-- Which ended weeks' partitions have been compacted (PartitionMaintenance.compact, docs/storage.md "A week that has
-- ended"): one row per partition, claimed before the work (`started_at`) and finished after it, with the partition's
-- bytes (heap, TOAST, indexes) before and after; a claim never finished (its process stopped) is taken over after a
-- while. A dropped partition's row goes with it.
CREATE TABLE "storage_compactions" (
    "partition" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "bytes_before" BIGINT,
    "bytes_after" BIGINT,

    CONSTRAINT "storage_compactions_pkey" PRIMARY KEY ("partition")
);

-- Claims the most recently ended partition of `parent` whose week ended before `ended_before` and which has not been
-- compacted (no row, or a claim older than `takeover` that never finished); returns its name, or NULL when there is
-- none. Two processes asking at once claim different partitions or none (the insert's conflict decides).
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

-- A claim given back unfinished (the partition's lock was not had in time): the next pass claims it again.
CREATE FUNCTION "storage_compaction_release"(part TEXT) RETURNS VOID LANGUAGE sql AS $$
  DELETE FROM "storage_compactions" WHERE "partition" = part AND finished_at IS NULL
$$;

-- The invalid indexes of a partition: what a REINDEX CONCURRENTLY that was interrupted leaves (`…_ccnew`, `…_ccold`).
CREATE FUNCTION "storage_invalid_indexes"(part TEXT) RETURNS TABLE (name TEXT) LANGUAGE sql STABLE AS $$
  SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
   WHERE x.indrelid = part::regclass AND NOT x.indisvalid
$$;

-- Records a partition's compaction as finished, with its bytes before and after.
CREATE FUNCTION "storage_compaction_finish"(part TEXT, before BIGINT) RETURNS BIGINT LANGUAGE sql AS $$
  UPDATE "storage_compactions"
     SET finished_at = now(), bytes_before = before, bytes_after = pg_total_relation_size(part::regclass)
   WHERE "partition" = part
  RETURNING bytes_after
$$;

-- Rewrites an ended week's partition of webhook_deliveries without the space its processing updates left: a copy of
-- its rows (in id order, its indexes built as they go) swapped in under the same name, in the caller's transaction.
-- Writers of that week wait from the start to the commit (the worker's processed mark of a delivery processed more
-- than a day late, a replay, an erasure's rewrite); readers do not, except for the moment of the swap, which takes the
-- table's ACCESS EXCLUSIVE lock (the caller bounds every wait with lock_timeout and tries again at the next pass).
-- Returns the number of rows.
CREATE FUNCTION "storage_rewrite_partition"(parent TEXT, part TEXT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
  fresh TEXT := part || '_rw';
  bound TEXT;
  lo TIMESTAMPTZ;
  hi TIMESTAMPTZ;
  idx RECORD;
  moved BIGINT;
BEGIN
  IF parent <> 'webhook_deliveries' OR part !~ ('^' || parent || '_(p[0-9]{8}|history)$') THEN
    RAISE EXCEPTION 'storage_rewrite_partition: % is not a partition name of %', part, parent;
  END IF;
  SELECT pg_get_expr(c.relpartbound, c.oid), "storage_partition_lower"(c.oid), "storage_partition_upper"(c.oid)
    INTO bound, lo, hi
    FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
   WHERE c.oid = part::regclass AND i.inhparent = parent::regclass;
  IF bound IS NULL THEN
    RAISE EXCEPTION 'storage_rewrite_partition: % is not attached to %', part, parent;
  END IF;
  EXECUTE format('LOCK TABLE %I IN SHARE MODE', part);
  EXECUTE format('DROP TABLE IF EXISTS %I', fresh);
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING INDEXES)', fresh, parent);
  EXECUTE format('INSERT INTO %I SELECT * FROM %I ORDER BY id', fresh, part);
  GET DIAGNOSTICS moved = ROW_COUNT;
  -- The bound as a constraint, so that ATTACH does not scan the rows again.
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (received_at IS NOT NULL AND received_at < %L%s)', fresh,
                 fresh || '_bound', hi, CASE WHEN lo IS NULL THEN '' ELSE format(' AND received_at >= %L', lo) END);
  EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, part);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I %s', parent, fresh, bound);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', fresh, fresh || '_bound');
  EXECUTE format('DROP TABLE %I', part);
  EXECUTE format('ALTER TABLE %I RENAME TO %I', fresh, part);
  FOR idx IN SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
              WHERE x.indrelid = part::regclass AND i.relname LIKE fresh || '%' LOOP
    EXECUTE format('ALTER INDEX %I RENAME TO %I', idx.relname, part || substr(idx.relname, length(fresh) + 1));
  END LOOP;
  RETURN moved;
END $$;

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
