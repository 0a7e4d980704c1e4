-- Campaigns (issue 27): one template to many recipients, run by the worker at the number's pace.

CREATE TABLE "campaigns" (
  "id" BIGSERIAL PRIMARY KEY,
  "business_account_id" UUID NOT NULL REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "name" TEXT NOT NULL,
  "phone_number_id" TEXT NOT NULL,
  "template_name" TEXT NOT NULL,
  "template_language" TEXT NOT NULL,
  "template_category" TEXT,
  -- cloud_api or marketing_messages (a MARKETING template of an onboarded account), decided at creation.
  "upstream_api" TEXT NOT NULL DEFAULT 'cloud_api',
  -- running, paused, cancelled, completed.
  "status" TEXT NOT NULL DEFAULT 'running',
  -- Why the service paused it by itself (the upstream token rejected, …); null when an operator did.
  "status_reason" TEXT,
  "total" INTEGER NOT NULL,
  "created_by_id" UUID,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "completed_at" TIMESTAMPTZ(3),
  -- The runner that holds the campaign (a worker's token) and until when: one runner at a time.
  "lease_owner" TEXT,
  "lease_until" TIMESTAMPTZ(3),
  -- Bumped by every start, resume and retry-failed: the queue job of each run has its own id.
  "run" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "campaigns_status" CHECK ("status" IN ('running', 'paused', 'cancelled', 'completed'))
);
CREATE INDEX "campaigns_business_account_id_created_at_id_idx" ON "campaigns" ("business_account_id", "created_at" DESC, "id" DESC);
-- The sweeper's look for running campaigns whose runner is gone.
CREATE INDEX "campaigns_running_idx" ON "campaigns" ("lease_until") WHERE "status" = 'running';

-- One row per recipient, in the order given. state: pending (not claimed yet), claimed (its message exists: the
-- message's status is the recipient's), skipped (never sent, with skip_reason), cancelled (the campaign was).
CREATE TABLE "campaign_recipients" (
  "id" BIGSERIAL PRIMARY KEY,
  "campaign_id" BIGINT NOT NULL REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "position" INTEGER NOT NULL,
  "to" TEXT,
  "user_id" TEXT,
  "components" JSONB,
  "state" TEXT NOT NULL DEFAULT 'pending',
  -- The message of its latest attempt (messages.id; no foreign key: the send path's inserts stay cheap).
  "message_id" BIGINT,
  "attempts" INTEGER NOT NULL DEFAULT 0,
  "skip_reason" TEXT,
  -- The runner's lease token at claim time: a claim of a dead runner is told apart from the live one's.
  "claimed_by" TEXT,
  "claimed_at" TIMESTAMPTZ(3),
  CONSTRAINT "campaign_recipients_state" CHECK ("state" IN ('pending', 'claimed', 'skipped', 'cancelled')),
  CONSTRAINT "campaign_recipients_one_recipient" CHECK (("to" IS NULL) <> ("user_id" IS NULL))
);
CREATE UNIQUE INDEX "campaign_recipients_campaign_id_position_key" ON "campaign_recipients" ("campaign_id", "position");
-- The runner's claims (the oldest pending first) and the counts.
CREATE INDEX "campaign_recipients_campaign_id_state_id_idx" ON "campaign_recipients" ("campaign_id", "state", "id");

-- Messages a campaign created carry it (GET /messages?campaignId=…).
ALTER TABLE "messages" ADD COLUMN "campaign_id" BIGINT;
CREATE INDEX "messages_campaign_id_created_at_idx" ON "messages" ("business_account_id", "campaign_id", "created_at" DESC) WHERE "campaign_id" IS NOT NULL;
