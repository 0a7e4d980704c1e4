-- Issue 40, item 2: the events' indexes hold what a documented query needs, and a status item's display number is kept
-- once (docs/storage.md, "Lean events: the layout").
--
-- The kind and status list indexes cover the selective values only. A status event (kind 2, the bulk of the table) is
-- listed by `?kind=status_update` from the account's newest-first index (waba_id, created_at desc, id desc), filtered
-- by kind, and `?status=sent|delivered|read` (codes 1-3) the same way: in a page of those, most of the account's events
-- match. The rare kinds (an inbound message, a template or account change, a call …) and the rare statuses (failed,
-- deleted, a call's, one Meta adds later: code 0) keep an index: the reads name the predicate literally
-- (src/events/statements/reads.ts), so their generic plans can use it.
DROP INDEX "events_waba_id_kind_created_at_id_idx";
DROP INDEX "events_waba_id_status_created_at_id_idx";
CREATE INDEX "events_waba_id_kind_created_at_id_idx" ON "events"("waba_id", "kind", "created_at" DESC, "id" DESC)
  WHERE "kind" <> 2;
CREATE INDEX "events_waba_id_status_created_at_id_idx" ON "events"("waba_id", "status", "created_at" DESC, "id" DESC)
  WHERE "status" NOT IN (1, 2, 3);

-- The dedupe probe looks up the chunk's keys (`dedupe_key = ANY(…)`) in the partitions of the last 8 days and reads
-- created_at from the row of a key it finds (a redelivery: rare), so the index holds the key alone.
DROP INDEX "events_dedupe_key_created_at_idx";
CREATE INDEX "events_dedupe_key_idx" ON "events"("dedupe_key");

-- Bit 12 of `lean`: the status item's `metadata.display_phone_number` is `display_phone` in decimal (the same digits,
-- no leading zero, 15 at most: E.164). With bit 1 (`metadata.phone_number_id`) that leaves a status item from Meta
-- nothing in `raw` but what Meta adds later, and an item with nothing left is stored as NULL (`lean` set): no bytes,
-- where `{}` took 5 and moved the columns after it to their next alignment (8 bytes a row in all). Rows stored before
-- keep their display number in `raw` (`display_phone` NULL): no rewrite.
ALTER TABLE "events" ALTER COLUMN "raw" DROP NOT NULL;
ALTER TABLE "events" ADD COLUMN "display_phone" BIGINT;
COMMENT ON COLUMN "events"."display_phone" IS
  'A status item''s metadata.display_phone_number when bit 12 of lean says so (src/events/statements/lean-encoding.ts)';
COMMENT ON COLUMN "events"."lean" IS
  'Keys of a status item kept in other columns (NULL: none): bit 0 timestamp (upstream_timestamp), bit 1 metadata.phone_number_id (phone_number_id), bits 2-11 pricing, packed, bit 12 metadata.display_phone_number (display_phone) (src/events/statements/lean-encoding.ts)';
