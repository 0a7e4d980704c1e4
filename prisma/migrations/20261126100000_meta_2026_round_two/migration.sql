-- Meta 2026, second round (issue 28): sends to business-scoped user ids, marketing stops, the Marketing Messages
-- API, blocked users.

-- A message goes to a phone number (`to`) or to a business-scoped user id (`user_id`, Meta's `recipient`), never
-- both; which API carried it (`cloud_api`: POST /{phone-number-id}/messages, `marketing_messages`: POST
-- /{phone-number-id}/marketing_messages).
ALTER TABLE "messages" ALTER COLUMN "to" DROP NOT NULL;
ALTER TABLE "messages" ADD COLUMN "user_id" TEXT;
ALTER TABLE "messages" ADD COLUMN "upstream_api" TEXT NOT NULL DEFAULT 'cloud_api';
ALTER TABLE "messages" ADD CONSTRAINT "messages_one_recipient" CHECK (("to" IS NULL) <> ("user_id" IS NULL));
CREATE INDEX "messages_business_account_id_user_id_created_at_idx" ON "messages" ("business_account_id", "user_id", "created_at" DESC)
  WHERE "user_id" IS NOT NULL;

-- The Marketing Messages API onboarding of the account: Meta's marketing_messages_onboarding_status (ONBOARDED,
-- INELIGIBLE_*, …) as read at connect and in credential checks, or ONBOARDED from the MM_LITE_TERMS_SIGNED
-- account_update webhook; when it was last learnt (Meta's time for a webhook).
ALTER TABLE "business_accounts" ADD COLUMN "marketing_messages_status" TEXT;
ALTER TABLE "business_accounts" ADD COLUMN "marketing_messages_updated_at" TIMESTAMPTZ(3);

-- The latest marketing preference of a user of a business account (user_preferences webhook, or Meta's 131050
-- failure): `user` is the phone number (wa_id digits) or the business-scoped user id; a webhook naming both is
-- stored under both. Newer by Meta's time wins.
CREATE TABLE "marketing_preferences" (
  "business_account_id" UUID NOT NULL REFERENCES "business_accounts"("id"),
  "user" TEXT NOT NULL,
  "value" TEXT NOT NULL,
  "source" TEXT NOT NULL,
  "detail" TEXT,
  "updated_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "marketing_preferences_pkey" PRIMARY KEY ("business_account_id", "user")
);
CREATE INDEX "marketing_preferences_business_account_id_updated_at_idx" ON "marketing_preferences" ("business_account_id", "updated_at" DESC);

-- Users blocked on a phone number (Meta's POST /{phone-number-id}/block_users): `user` as given (phone digits or
-- business-scoped user id), `wa_id` as Meta resolved it.
CREATE TABLE "blocked_users" (
  "business_account_id" UUID NOT NULL REFERENCES "business_accounts"("id"),
  "phone_number_id" TEXT NOT NULL,
  "user" TEXT NOT NULL,
  "wa_id" TEXT,
  "blocked_by_id" UUID,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  CONSTRAINT "blocked_users_pkey" PRIMARY KEY ("business_account_id", "phone_number_id", "user")
);
CREATE INDEX "blocked_users_business_account_id_phone_number_id_created_at_idx" ON "blocked_users" ("business_account_id", "phone_number_id", "created_at" DESC);
CREATE INDEX "blocked_users_business_account_id_phone_number_id_wa_id_idx" ON "blocked_users" ("business_account_id", "phone_number_id", "wa_id");

-- Both are read by the send path through the API processes' send-context cache: a change NOTIFYs `send_context`
-- with its business account (the function of migration 20261124090000_send_context_notify).
CREATE TRIGGER "marketing_preferences_notify_send_context" AFTER INSERT OR UPDATE OR DELETE ON "marketing_preferences"
  FOR EACH ROW EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "marketing_preferences_notify_send_context_truncate" AFTER TRUNCATE ON "marketing_preferences"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "blocked_users_notify_send_context" AFTER INSERT OR UPDATE OR DELETE ON "blocked_users"
  FOR EACH ROW EXECUTE FUNCTION "notify_send_context"();
CREATE TRIGGER "blocked_users_notify_send_context_truncate" AFTER TRUNCATE ON "blocked_users"
  FOR EACH STATEMENT EXECUTE FUNCTION "notify_send_context"();
