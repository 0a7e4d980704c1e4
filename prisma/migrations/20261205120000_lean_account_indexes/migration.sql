-- Issue 40, item 2 (a live week's bytes): `events`' per-account indexes and its dedupe key on keys that pack
-- (docs/storage.md, "Indexes" and "The account's key").
--
-- (waba_id, created_at desc, id desc) and (waba_id, xid, id) were about half full while their week was live, 87 and
-- 88 B per status event at 10 M against 50 once rebuilt: each account appends at the end of its own key range, and
-- a page that splits there is split in the middle, leaving a left half that no later key fills. PostgreSQL splits
-- such a page after the new item instead (the left page left full) when the index's entries are equal-width and
-- no wider than two 8-byte keys, as here: the account as a 64-bit hash of its id (the 15-digit text is 16 bytes) and
-- one more column. created_at and xid are each shared by the rows one transaction stores for one account, which
-- B-tree deduplication then keeps as one entry; the id that ordered them within it is sorted after the scan
-- (Incremental Sort over the transaction's rows). The statements read through them name both the key and the id
-- (src/events/statements/index-keys.ts): a collision of two accounts' hashes only reads the other's rows to drop them.
--
-- The dedupe key's B-tree holds its 16 bytes as a uuid (fixed width: 24-byte entries against the bytea's 32 with its
-- length byte and padding); the column stays bytea (no rewrite of the table), the probe compares the same expression.
-- A message's events are found by a 64-bit hash of its wamid (16-byte entries against the ~60-byte text's 64), then
-- the wamid itself.
--
-- Builds the four indexes on every partition (no row is rewritten); run with the service stopped, like every
-- migration here. Timed in bench/history/2026-12-05-lean-account-indexes.md.

DROP INDEX "events_waba_id_created_at_id_idx";
DROP INDEX "events_waba_id_xid_id_idx";
DROP INDEX "events_dedupe_key_idx";
DROP INDEX "events_message_id_idx";

-- GET /webhooks/events newest first (unfiltered, since/until, the usual kinds and statuses, filtered), the content
-- retention's range per account.
CREATE INDEX "events_account_created_at_idx" ON "events" (hashtextextended("waba_id", 0), "created_at");
-- The events feed (after=, long polls) and its horizon's `beyond`.
CREATE INDEX "events_account_xid_idx" ON "events" (hashtextextended("waba_id", 0), "xid");
-- The dedupe probe of every stored item (EventsRepository.insert, storedKeys).
CREATE INDEX "events_dedupe_key_idx" ON "events" ((encode("dedupe_key", 'hex')::uuid));
-- A message's status history (GET /messages/:id), ?messageId=, a contact's erasure by its messages.
CREATE INDEX "events_message_id_idx" ON "events" (hashtextextended("message_id", 0));
