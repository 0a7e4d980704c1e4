-- Meta fidelity 2026 (issue 14, parts 2–4): business-scoped user ids, pricing, quality, limits and account health.

-- Events: the business-scoped user id (BSUID) of a status's recipient or an inbound message's sender, present
-- with or without a phone number; and the pricing object of a status, as Meta sent it.
ALTER TABLE "events" ADD COLUMN "user_id" TEXT;
ALTER TABLE "events" ADD COLUMN "pricing" JSONB;

-- The userId filter of GET /webhooks/events (pages: newest first), in the shape of the other filters' indexes.
-- Partial: most events carry no user id yet, and an event without one costs this index nothing on insert
-- (the events write path is the hot path). Prisma's schema language cannot express it; it lives here.
CREATE INDEX "events_waba_id_user_id_created_at_id_idx" ON "events" ("waba_id", "user_id", "created_at" DESC, "id" DESC)
  WHERE "user_id" IS NOT NULL;

-- Messages: the pricing of the message (the status webhooks' pricing object), for GET /messages/analytics.
ALTER TABLE "messages" ADD COLUMN "pricing_model" TEXT;
ALTER TABLE "messages" ADD COLUMN "pricing_category" TEXT;
ALTER TABLE "messages" ADD COLUMN "pricing_type" TEXT;
ALTER TABLE "messages" ADD COLUMN "pricing_billable" BOOLEAN;

-- Phone numbers: the messaging limit (phone_number_quality_update), and when Meta last said anything about
-- the number's quality, limit or status, so an older webhook delivered late changes nothing.
ALTER TABLE "phone_numbers" ADD COLUMN "messaging_limit" TEXT;
ALTER TABLE "phone_numbers" ADD COLUMN "quality_updated_at" TIMESTAMPTZ(3);
ALTER TABLE "phone_numbers" ADD COLUMN "name_updated_at" TIMESTAMPTZ(3);

-- Templates: Meta's quality score (message_template_quality_update) and when it was decided.
ALTER TABLE "templates" ADD COLUMN "quality_score" TEXT;
ALTER TABLE "templates" ADD COLUMN "quality_updated_at" TIMESTAMPTZ(3);

-- Business accounts: their standing with Meta (account_update, account_alerts). ban_state: DISABLE,
-- SCHEDULE_FOR_DISABLE, REINSTATE; restrictions: [{type, expiration}]; alerts: the active ones.
ALTER TABLE "business_accounts" ADD COLUMN "ban_state" TEXT;
ALTER TABLE "business_accounts" ADD COLUMN "ban_date" TEXT;
ALTER TABLE "business_accounts" ADD COLUMN "restrictions" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "business_accounts" ADD COLUMN "violation_type" TEXT;
ALTER TABLE "business_accounts" ADD COLUMN "pricing_tiers" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "business_accounts" ADD COLUMN "alerts" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "business_accounts" ADD COLUMN "standing_updated_at" TIMESTAMPTZ(3);
-- Meta's time of the last ban, restrictions and violation applied, each on its own ({ban, restrictions,
-- violation}: ISO 8601): Meta promises no order, and an older one delivered late changes nothing.
ALTER TABLE "business_accounts" ADD COLUMN "standing_times" JSONB NOT NULL DEFAULT '{}';

-- The send path's cache (src/messages/send/send-context.cache.ts) holds the account's ban state and
-- restrictions too: the trigger of migration 20261124150000_account_subscription_credentials already NOTIFYs
-- `send_context` with the account id on every change to a business_accounts row, these columns included.
