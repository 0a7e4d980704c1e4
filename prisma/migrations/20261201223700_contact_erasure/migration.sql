-- Data a customer can take back (issue 41): per-contact erasure.
--
-- messages.erased_at: an erased contact's messages keep their row (status, times, pricing, error code: the counts and
-- analytics, which hold nothing personal) but lose their content, the contact's address and the wamid. An erased
-- outbound row names no recipient, so "exactly one recipient" holds for the rows that are not erased.
ALTER TABLE "messages" ADD COLUMN "erased_at" TIMESTAMPTZ(3);
ALTER TABLE "messages" DROP CONSTRAINT IF EXISTS "messages_one_recipient";
ALTER TABLE "messages" ADD CONSTRAINT "messages_one_recipient"
  CHECK ("direction" = 'inbound' OR "erased_at" IS NOT NULL OR (("to" IS NULL) <> ("user_id" IS NULL)));
-- A contact's inbound messages by sender (export, erasure): `to` and `user_id` have theirs already.
CREATE INDEX "messages_business_account_id_from_idx" ON "messages" ("business_account_id", "from") WHERE "from" IS NOT NULL;

-- An erased campaign recipient keeps its row (the campaign's counts) without its address and parameters; it is
-- never pending (the erasure skips a pending one), so the runner never picks a row without an address.
ALTER TABLE "campaign_recipients" DROP CONSTRAINT IF EXISTS "campaign_recipients_one_recipient";
ALTER TABLE "campaign_recipients" ADD CONSTRAINT "campaign_recipients_one_recipient"
  CHECK ((("to" IS NULL) <> ("user_id" IS NULL)) OR ("to" IS NULL AND "user_id" IS NULL AND "components" IS NULL AND "state" <> 'pending'));

-- A raw webhook body rewritten without an erased contact's items: its stored signature no longer matches the bytes,
-- and this says when they changed.
ALTER TABLE "webhook_deliveries" ADD COLUMN "redacted_at" TIMESTAMPTZ(3);

