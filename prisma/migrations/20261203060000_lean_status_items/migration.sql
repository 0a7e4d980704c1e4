-- Issue 40, item 2: a status item's `timestamp`, its `metadata.phone_number_id` and its `pricing` are kept once, like its
-- `id`, `status` and `recipient_id` (migration lean_events): `timestamp` is `upstream_timestamp`, `phone_number_id` is the
-- column of that name, and `pricing` (a few closed lists) packs into bits. `lean` says which of them the worker took out
-- of `raw` (NULL: none): bit 0 `timestamp`, bit 1 `metadata.phone_number_id`, bits 2–11 the `pricing` object (see
-- src/events/statements/lean-encoding.ts, which encodes on insert and decodes on every read). Rows stored before keep
-- their items whole (NULL here): nothing to convert, and the column costs no rewrite.
ALTER TABLE "events" ADD COLUMN "lean" SMALLINT;
COMMENT ON COLUMN "events"."lean" IS
  'Keys of a status item kept in other columns (NULL: none): bit 0 timestamp (upstream_timestamp), bit 1 metadata.phone_number_id (phone_number_id), bits 2-11 pricing, packed (src/events/statements/lean-encoding.ts)';
