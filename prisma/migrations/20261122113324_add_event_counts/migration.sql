-- CreateTable
CREATE TABLE "event_counts" (
    "waba_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT '',
    "shard" SMALLINT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "event_counts_pkey" PRIMARY KEY ("waba_id","kind","status","shard")
);

-- Maintained counts (hand-written; Prisma's schema language has no triggers).
-- Every insert into events adds to its (waba_id, kind, status) total in the same transaction, every delete
-- subtracts, a change of waba_id/kind/status moves the row between totals, TRUNCATE empties them: the sums are
-- exact at every commit. A transaction writes to one of 16 shards (by its transaction id), so concurrent
-- inserters seldom wait on the same counter row; readers add the shards up. Totals are upserted in key order,
-- so two statements never lock the same rows in opposite orders. NULL status is counted under ''.

CREATE FUNCTION "event_counts_shard"() RETURNS smallint LANGUAGE sql VOLATILE AS $$
  SELECT (pg_current_xact_id()::text::bigint % 16)::smallint
$$;

CREATE FUNCTION "event_counts_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "shard", "count")
  SELECT n."waba_id", n."kind", COALESCE(n."status", ''), "event_counts_shard"(), count(*)
    FROM new_rows n
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT ("waba_id", "kind", "status", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE FUNCTION "event_counts_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "shard", "count")
  SELECT o."waba_id", o."kind", COALESCE(o."status", ''), "event_counts_shard"(), -count(*)
    FROM old_rows o
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT ("waba_id", "kind", "status", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE FUNCTION "event_counts_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "shard", "count")
  SELECT d."waba_id", d."kind", d."status", "event_counts_shard"(), sum(d."delta")
    FROM (VALUES (OLD."waba_id", OLD."kind", COALESCE(OLD."status", ''), -1),
                 (NEW."waba_id", NEW."kind", COALESCE(NEW."status", ''), 1)) AS d ("waba_id", "kind", "status", "delta")
   GROUP BY 1, 2, 3
   ORDER BY 1, 2, 3
  ON CONFLICT ("waba_id", "kind", "status", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE FUNCTION "event_counts_after_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "event_counts";
  RETURN NULL;
END $$;

CREATE TRIGGER "event_counts_insert" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_insert"();
CREATE TRIGGER "event_counts_delete" AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_delete"();
-- Row level, and only when one of the counted columns really changes (never on the worker's processed updates).
CREATE TRIGGER "event_counts_update" AFTER UPDATE OF "waba_id", "kind", "status" ON "events"
  FOR EACH ROW WHEN (OLD."waba_id" IS DISTINCT FROM NEW."waba_id" OR OLD."kind" IS DISTINCT FROM NEW."kind"
                     OR OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "event_counts_after_update"();
CREATE TRIGGER "event_counts_truncate" AFTER TRUNCATE ON "events"
  FOR EACH STATEMENT EXECUTE FUNCTION "event_counts_after_truncate"();

-- Events stored before this migration. The triggers above already hold events' lock, so no insert can slip
-- between this count and the commit.
INSERT INTO "event_counts" ("waba_id", "kind", "status", "shard", "count")
SELECT "waba_id", "kind", COALESCE("status", ''), 0, count(*) FROM "events" GROUP BY 1, 2, 3;
