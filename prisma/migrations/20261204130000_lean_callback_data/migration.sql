-- Issue 40, item 2: one copy of what Meta sent. Every message sent through the service carries
-- `biz_opaque_callback_data` = `bm:<message id>` (src/messages/send), and Meta echoes it in each of that message's
-- statuses; kept in `raw` it was the one key left of such an item (≈ 47 bytes of jsonb and the alignment after it).
-- Bit 13 of `lean`: the item's `biz_opaque_callback_data` is `bm:` and `callback_id` in decimal (digits, no leading
-- zero, 15 at most). Any other value stays in `raw` as sent. Rows stored before keep it in `raw` (`callback_id` NULL):
-- no rewrite, a NULL column costs no byte (the row's null bitmap keeps its size).
ALTER TABLE "events" ADD COLUMN "callback_id" BIGINT;
COMMENT ON COLUMN "events"."callback_id" IS
  'A status item''s biz_opaque_callback_data is bm: and this number when bit 13 of lean says so (src/events/statements/lean-encoding.ts)';
COMMENT ON COLUMN "events"."lean" IS
  'Keys of a status item kept in other columns (NULL: none): bit 0 timestamp (upstream_timestamp), bit 1 metadata.phone_number_id (phone_number_id), bits 2-11 pricing, packed, bit 12 metadata.display_phone_number (display_phone), bit 13 biz_opaque_callback_data (callback_id) (src/events/statements/lean-encoding.ts)';
