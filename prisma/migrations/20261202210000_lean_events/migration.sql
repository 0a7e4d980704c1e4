-- Issue 40, item 2 ("lean events"): one copy of what Meta sent, compact columns for what is enumerable, a 16-byte hashed
-- dedupe key, an index only where a documented query needs it (docs/storage.md, "Indexes"). Converts a database of the
-- previous shape WITH its rows, in one transaction, the service stopped (it rewrites `events` and `webhook_deliveries`:
-- time per million rows in docs/storage.md, "Upgrading").

-- ---- The vocabulary: one definition, in the database, used by the rewrite below, the inserts, the reads and the
-- counts' triggers. Codes of a closed list (kind) fail loudly on an unknown value (NOT NULL); open lists (Meta's
-- status and webhook field) keep an unknown value as text beside code 0.

CREATE FUNCTION "events_kind_code"(text) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (CASE $1 WHEN 'inbound_message' THEN 1 WHEN 'status_update' THEN 2 WHEN 'template_status' THEN 3
    WHEN 'account_update' THEN 4 WHEN 'call' THEN 5 WHEN 'handover' THEN 6 WHEN 'agent_message' THEN 7 END)::smallint
$$;
CREATE FUNCTION "events_kind_name"(smallint) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE $1 WHEN 1 THEN 'inbound_message' WHEN 2 THEN 'status_update' WHEN 3 THEN 'template_status'
    WHEN 4 THEN 'account_update' WHEN 5 THEN 'call' WHEN 6 THEN 'handover' WHEN 7 THEN 'agent_message' END
$$;

CREATE FUNCTION "events_status_code"(text) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (CASE WHEN $1 IS NULL THEN NULL WHEN $1 = 'sent' THEN 1 WHEN $1 = 'delivered' THEN 2 WHEN $1 = 'read' THEN 3
    WHEN $1 = 'failed' THEN 4 WHEN $1 = 'played' THEN 5 WHEN $1 = 'deleted' THEN 6 WHEN $1 = 'warning' THEN 7
    WHEN $1 = 'connect' THEN 8 WHEN $1 = 'terminate' THEN 9 WHEN $1 = 'ringing' THEN 10 WHEN $1 = 'accepted' THEN 11
    WHEN $1 = 'rejected' THEN 12 WHEN $1 = 'completed' THEN 13 ELSE 0 END)::smallint
$$;
-- $2: the text kept beside code 0.
CREATE FUNCTION "events_status_name"(smallint, text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE $1 WHEN 0 THEN $2 WHEN 1 THEN 'sent' WHEN 2 THEN 'delivered' WHEN 3 THEN 'read' WHEN 4 THEN 'failed'
    WHEN 5 THEN 'played' WHEN 6 THEN 'deleted' WHEN 7 THEN 'warning' WHEN 8 THEN 'connect' WHEN 9 THEN 'terminate'
    WHEN 10 THEN 'ringing' WHEN 11 THEN 'accepted' WHEN 12 THEN 'rejected' WHEN 13 THEN 'completed' END
$$;

CREATE FUNCTION "events_type_code"(text) RETURNS smallint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (CASE $1 WHEN 'messages' THEN 1 WHEN 'message_template_status_update' THEN 2
    WHEN 'message_template_quality_update' THEN 3 WHEN 'template_category_update' THEN 4
    WHEN 'message_template_components_update' THEN 5 WHEN 'account_update' THEN 6 WHEN 'phone_number_quality_update' THEN 7
    WHEN 'phone_number_name_update' THEN 8 WHEN 'account_review_update' THEN 9 WHEN 'business_capability_update' THEN 10
    WHEN 'user_preferences' THEN 11 WHEN 'account_alerts' THEN 12 WHEN 'calls' THEN 13 WHEN 'messaging_handovers' THEN 14
    WHEN 'standby' THEN 15 WHEN 'smb_message_echoes' THEN 16 WHEN 'history' THEN 17 WHEN 'smb_app_state_sync' THEN 18
    WHEN 'security' THEN 19 ELSE 0 END)::smallint
$$;
CREATE FUNCTION "events_type_name"(smallint, text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE $1 WHEN 0 THEN $2 WHEN 1 THEN 'messages' WHEN 2 THEN 'message_template_status_update'
    WHEN 3 THEN 'message_template_quality_update' WHEN 4 THEN 'template_category_update'
    WHEN 5 THEN 'message_template_components_update' WHEN 6 THEN 'account_update' WHEN 7 THEN 'phone_number_quality_update'
    WHEN 8 THEN 'phone_number_name_update' WHEN 9 THEN 'account_review_update' WHEN 10 THEN 'business_capability_update'
    WHEN 11 THEN 'user_preferences' WHEN 12 THEN 'account_alerts' WHEN 13 THEN 'calls' WHEN 14 THEN 'messaging_handovers'
    WHEN 15 THEN 'standby' WHEN 16 THEN 'smb_message_echoes' WHEN 17 THEN 'history' WHEN 18 THEN 'smb_app_state_sync'
    WHEN 19 THEN 'security' END
$$;

-- The dedupe key: the first 16 bytes of SHA-256 of the key's text (src/events/dedupe-key.ts computes the same in the
-- worker), so a redelivery of an item stored before this upgrade finds it.
CREATE FUNCTION "events_dedupe_hash"(text) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT substring(sha256(convert_to($1, 'UTF8')) FROM 1 FOR 16)
$$;

-- A status's title as classify() words it from its columns ($1 status, $2 error title, $3 error code). Stored as NULL
-- only where this gives back the very text (the insert and the rewrite compare): any wording it does not know is kept.
CREATE FUNCTION "events_status_title"(text, text, integer) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN $1 IS NULL THEN 'Message status update'
    WHEN $1 = 'failed' THEN CASE WHEN $2 IS NULL AND $3 IS NULL THEN 'Message failed'
                                 ELSE 'Message failed: ' || coalesce($2, 'Unknown error') || coalesce(' (' || $3 || ')', '') END
    WHEN $1 = 'sent' THEN 'Message sent' WHEN $1 = 'delivered' THEN 'Message delivered' WHEN $1 = 'read' THEN 'Message read'
    WHEN $1 = 'played' THEN 'Message played' WHEN $1 = 'deleted' THEN 'Message deleted'
    ELSE 'Message status: ' || $1 END
$$;

-- A status's raw item without what its columns hold already (`id` = message_id, `status`, `recipient_id` = recipient),
-- and back. Only a status with a message id is thinned ($1 raw, $2 whether a status, $3 message_id, $4 status,
-- $5 recipient), and only when putting the keys back gives the very item (else it is kept whole); a thinned item is
-- one without `id` whose message_id is set, which a status item never is (message_id is its `id`).
CREATE FUNCTION "events_raw"(jsonb, boolean, text, text, text) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN $2 AND $3 IS NOT NULL AND NOT $1 ? 'id'
    THEN $1 || jsonb_build_object('id', $3)
            || CASE WHEN $4 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('status', $4) END
            || CASE WHEN $5 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('recipient_id', $5) END
    ELSE $1 END
$$;
CREATE FUNCTION "events_raw_lean"(jsonb, boolean, text, text, text) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN $2 AND $3 IS NOT NULL AND jsonb_typeof($1) = 'object' AND $1 -> 'id' = to_jsonb($3)
                AND ($4 IS NULL OR $1 -> 'status' = to_jsonb($4))
                AND ($5 IS NULL OR $1 -> 'recipient_id' = to_jsonb($5))
    THEN $1 - 'id' - CASE WHEN $4 IS NULL THEN '' ELSE 'status' END - CASE WHEN $5 IS NULL THEN '' ELSE 'recipient_id' END
    ELSE $1 END
$$;

-- ---- events: the indexes to be rebuilt or dropped go first (the rewrite would rebuild them all).
DROP INDEX "events_dedupe_key_created_at_idx";
DROP INDEX "events_message_id_idx";
DROP INDEX "events_waba_id_kind_created_at_id_idx";
DROP INDEX "events_waba_id_status_created_at_id_idx";
DROP INDEX "events_waba_id_recipient_created_at_id_idx";

-- An unknown status or field (code 0) keeps its text here: a rare row, so the UPDATE touches few.
ALTER TABLE "events" ADD COLUMN "status_other" TEXT, ADD COLUMN "event_type_other" TEXT;
UPDATE "events" SET "status_other" = "status" WHERE "events_status_code"("status") = 0;
UPDATE "events" SET "event_type_other" = "event_type" WHERE "events_type_code"("event_type") = 0;

-- One rewrite of every partition. The USING expressions read the row as it was (text kind and status).
-- `pricing` was a copy of the status item's `pricing` (read back from raw); `processed_at` was written and never read.
ALTER TABLE "events"
  ALTER COLUMN "event_type" SET DATA TYPE SMALLINT USING "events_type_code"("event_type"),
  ALTER COLUMN "kind" SET DATA TYPE SMALLINT USING "events_kind_code"("kind"),
  ALTER COLUMN "title" DROP NOT NULL,
  ALTER COLUMN "title" SET DATA TYPE TEXT USING (
    CASE WHEN "kind" = 'status_update' AND "title" = "events_status_title"("status", "error_title", "error_code") THEN NULL
         ELSE "title" END),
  ALTER COLUMN "status" SET DATA TYPE SMALLINT USING "events_status_code"("status"),
  ALTER COLUMN "raw" SET DATA TYPE JSONB USING "events_raw_lean"("raw", "kind" = 'status_update', "message_id", "status", "recipient"),
  ALTER COLUMN "dedupe_key" SET DATA TYPE BYTEA USING "events_dedupe_hash"("dedupe_key"),
  ALTER COLUMN "attempts" SET DATA TYPE SMALLINT,
  DROP COLUMN "pricing",
  DROP COLUMN "processed_at";

-- B-trees on the long keys, the dedupe key now 16 bytes. The dedupe probe is `dedupe_key = ANY($keys) AND created_at in
-- the window`: (dedupe_key, created_at) answers it from the index alone. (Hash indexes were tried: a hash index cannot
-- take `= ANY(array)` in a plain index scan, so the probe's generic plan scanned the week's partition by created_at,
-- and their bucket splits cost the inserts: bench/history/2026-12-03-issue-40-where-the-time-goes.md.)
CREATE INDEX "events_dedupe_key_created_at_idx" ON "events"("dedupe_key", "created_at");
CREATE INDEX "events_message_id_idx" ON "events"("message_id");
CREATE INDEX "events_recipient_idx" ON "events"("recipient");
CREATE INDEX "events_waba_id_kind_created_at_id_idx" ON "events"("waba_id", "kind", "created_at" DESC, "id" DESC);
CREATE INDEX "events_waba_id_status_created_at_id_idx" ON "events"("waba_id", "status", "created_at" DESC, "id" DESC);

-- The counts stay keyed by the names (what the API filters and answers): the triggers name the codes.
CREATE OR REPLACE FUNCTION "event_counts_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT n."waba_id", "events_kind_name"(n."kind"), COALESCE("events_status_name"(n."status", n."status_other"), ''),
         "storage_period_start"(n."created_at"), "event_counts_shard"(), count(*)
    FROM new_rows n
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "event_counts_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT o."waba_id", "events_kind_name"(o."kind"), COALESCE("events_status_name"(o."status", o."status_other"), ''),
         "storage_period_start"(o."created_at"), "event_counts_shard"(), -count(*)
    FROM old_rows o
   GROUP BY 1, 2, 3, 4
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "event_counts_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "event_counts" AS c ("waba_id", "kind", "status", "bucket", "shard", "count")
  SELECT d."waba_id", d."kind", d."status", d."bucket", "event_counts_shard"(), sum(d."delta")
    FROM (SELECT o."waba_id", "events_kind_name"(o."kind") AS "kind",
                 COALESCE("events_status_name"(o."status", o."status_other"), '') AS "status",
                 "storage_period_start"(o."created_at") AS "bucket", -1 AS "delta"
            FROM old_rows o
          UNION ALL
          SELECT n."waba_id", "events_kind_name"(n."kind"), COALESCE("events_status_name"(n."status", n."status_other"), ''),
                 "storage_period_start"(n."created_at"), 1
            FROM new_rows n) AS d
   GROUP BY 1, 2, 3, 4
  HAVING sum(d."delta") <> 0
   ORDER BY 1, 2, 3, 4
  ON CONFLICT ("waba_id", "kind", "status", "bucket", "shard") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  RETURN NULL;
END $$;

-- ---- webhook_deliveries: a processed delivery's items live in `events` (its one copy); its bytes and signature go
-- (the signature was checked on receipt; the bytes served only the processing). Waiting deliveries and dead letters
-- keep theirs (a replay needs them). One rewrite, no dead rows left behind.
DROP INDEX "webhook_deliveries_status_received_at_idx";
ALTER TABLE "webhook_deliveries"
  ALTER COLUMN "raw_body" SET DATA TYPE BYTEA USING (CASE WHEN "status" = 'processed' THEN '\x'::bytea ELSE "raw_body" END),
  ALTER COLUMN "signature" SET DATA TYPE TEXT USING (CASE WHEN "status" = 'processed' THEN '' ELSE "signature" END),
  ALTER COLUMN "batch_id" SET DATA TYPE TEXT USING (CASE WHEN "status" = 'processed' THEN NULL ELSE "batch_id" END),
  ALTER COLUMN "attempts" SET DATA TYPE SMALLINT;
-- Only the unfinished deliveries (waiting, dead letters) are looked up by status: the index holds those alone, so the
-- processing update takes a row out of it instead of adding an entry.
CREATE INDEX "webhook_deliveries_unfinished_idx" ON "webhook_deliveries"("status", "received_at") WHERE "status" IN ('received', 'failed');
