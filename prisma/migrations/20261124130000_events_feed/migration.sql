-- The events feed (GET /webhooks/events?after=…): a cursor a poller can follow without missing or repeating
-- an event (src/webhooks/events/events.repository.ts, `feed`).
--
-- Each event carries the id of the transaction that inserted it (xid8: 64 bits, never wraps). The feed is
-- ordered by (xid, id) and only shows rows whose xid is below the reading snapshot's xmin: no transaction
-- with a smaller xid is still running, so no row can ever appear behind a cursor already handed out.
--
-- Rows stored before this migration get xid 0 (a constant default is a catalogue change, not a rewrite of
-- the table); they come first, in id order. New rows take pg_current_xact_id() without the INSERT naming it.
ALTER TABLE "events" ADD COLUMN "xid" XID8 NOT NULL DEFAULT '0';
ALTER TABLE "events" ALTER COLUMN "xid" SET DEFAULT pg_current_xact_id();

CREATE INDEX "events_waba_id_xid_id_idx" ON "events" ("waba_id", "xid", "id");

-- Long-polling readers wait on channel `events_feed`. One NOTIFY per business account per transaction
-- (identical notifications of a transaction are delivered once), sent when it commits, payload
-- '<waba_id> <xid>': a reader knows the event is in the feed once the xmin horizon has passed that xid.
-- Statement level, reading the transition table the event_counts trigger already has: no per-row cost.
CREATE FUNCTION "events_feed_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  w text;
  x text := pg_current_xact_id()::text;
BEGIN
  FOR w IN SELECT DISTINCT n."waba_id" FROM new_rows n LOOP
    PERFORM pg_notify('events_feed', w || ' ' || x);
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER "events_feed_notify" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "events_feed_notify"();
