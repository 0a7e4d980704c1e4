-- Conversations for customer backends (issue 26): inbound messages are messages, and a feed over messages.
-- Idempotent (IF NOT EXISTS, DROP NOT NULL): issue 28 (20261126100000_meta_2026_round_two: sends to user ids) adds
-- `user_id` and makes `to` nullable too, with a plain ADD COLUMN; this one is named after it so that it runs second
-- and finds them there (`user_id` is the customer's business-scoped user id either way: the recipient of a send,
-- the sender of an inbound message).

-- Inbound rows: direction 'inbound', status 'received', the sender in `from` (null when Meta gives only the
-- business-scoped user id) and `user_id`; they have no `to`.
ALTER TABLE "messages" ADD COLUMN IF NOT EXISTS "direction" TEXT NOT NULL DEFAULT 'outbound';
ALTER TABLE "messages" ADD COLUMN IF NOT EXISTS "from" TEXT;
ALTER TABLE "messages" ADD COLUMN IF NOT EXISTS "user_id" TEXT;
ALTER TABLE "messages" ALTER COLUMN "to" DROP NOT NULL;

-- Issue 28's "exactly one recipient" (`to` or `user_id`) is a rule of sends: an inbound message has no `to`, and a
-- `user_id` only when Meta gives one. Replaced (or made, when issue 28's migration is absent) for outbound rows only.
ALTER TABLE "messages" DROP CONSTRAINT IF EXISTS "messages_one_recipient";
ALTER TABLE "messages" ADD CONSTRAINT "messages_one_recipient" CHECK ("direction" = 'inbound' OR (("to" IS NULL) <> ("user_id" IS NULL)));

CREATE INDEX IF NOT EXISTS "messages_business_account_id_direction_created_at_idx"
  ON "messages" ("business_account_id", "direction", "created_at" DESC);

-- The messages feed (GET /messages?after=…, src/messages/feed): the same horizon rule as the events feed
-- (migration events_feed). Every row carries the transaction that created it or last changed what a poller
-- follows (status, error, pricing, the wamid); the feed shows rows below the reading snapshot's xmin, ordered by
-- (changed_xid, id). Rows stored before this migration get 0 (a constant default: no rewrite) and come first.
ALTER TABLE "messages" ADD COLUMN IF NOT EXISTS "changed_xid" XID8 NOT NULL DEFAULT '0';
ALTER TABLE "messages" ALTER COLUMN "changed_xid" SET DEFAULT pg_current_xact_id();
CREATE INDEX IF NOT EXISTS "messages_business_account_id_changed_xid_id_idx" ON "messages" ("business_account_id", "changed_xid", "id");

-- A row trigger, so that no writer (API send path, worker statuses, a future statement) can forget it. The WHEN
-- clause is evaluated in C: a row whose followed columns did not change never enters PL/pgSQL.
CREATE OR REPLACE FUNCTION "messages_changed_xid"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."changed_xid" := pg_current_xact_id();
  RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS "messages_changed_xid" ON "messages";
CREATE TRIGGER "messages_changed_xid" BEFORE UPDATE ON "messages" FOR EACH ROW
  WHEN ((OLD."status", OLD."error_code", OLD."error_title", OLD."error_detail", OLD."error_category", OLD."upstream_message_id",
         OLD."pricing_model", OLD."pricing_category", OLD."pricing_type", OLD."pricing_billable")
        IS DISTINCT FROM
        (NEW."status", NEW."error_code", NEW."error_title", NEW."error_detail", NEW."error_category", NEW."upstream_message_id",
         NEW."pricing_model", NEW."pricing_category", NEW."pricing_type", NEW."pricing_billable"))
  EXECUTE FUNCTION "messages_changed_xid"();

-- Long polls of the messages feed wait on the events feed's channel (`events_feed`, payload '<waba_id> <xid>'),
-- keyed by the account's waba_id. The worker's changes to messages commit with an events insert, which already
-- notifies; the API's send path (pending insert, sent / failed) notifies through these statement triggers.
-- Identical notifications of one transaction are delivered once, so the worker's own ones cost no extra message.
CREATE OR REPLACE FUNCTION "messages_feed_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  w text;
  x text := pg_current_xact_id()::text;
BEGIN
  FOR w IN SELECT DISTINCT b."waba_id" FROM (SELECT DISTINCT n."business_account_id" FROM changed_rows n) n
             JOIN "business_accounts" b ON b."id" = n."business_account_id" LOOP
    PERFORM pg_notify('events_feed', w || ' ' || x);
  END LOOP;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS "messages_feed_notify_insert" ON "messages";
CREATE TRIGGER "messages_feed_notify_insert" AFTER INSERT ON "messages"
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "messages_feed_notify"();
DROP TRIGGER IF EXISTS "messages_feed_notify_update" ON "messages";
CREATE TRIGGER "messages_feed_notify_update" AFTER UPDATE ON "messages"
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "messages_feed_notify"();
