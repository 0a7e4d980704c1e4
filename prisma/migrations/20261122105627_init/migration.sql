-- CreateTable
CREATE TABLE "organizations" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "operators" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operators_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "operator_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "business_accounts" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "waba_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "access_token_encrypted" TEXT NOT NULL,
    "phone_numbers_synced_at" TIMESTAMPTZ(3),
    "templates_synced_at" TIMESTAMPTZ(3),
    "disconnected_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "business_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "phone_numbers" (
    "id" UUID NOT NULL,
    "business_account_id" UUID NOT NULL,
    "phone_number_id" TEXT NOT NULL,
    "display_phone_number" TEXT NOT NULL,
    "verified_name" TEXT,
    "quality_rating" TEXT,
    "status" TEXT,
    "code_verification_status" TEXT,
    "name_status" TEXT,
    "platform_type" TEXT,
    "throughput_level" TEXT,
    "removed_at" TIMESTAMPTZ(3),
    "synced_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "phone_numbers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "templates" (
    "id" UUID NOT NULL,
    "business_account_id" UUID NOT NULL,
    "upstream_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "category" TEXT,
    "parameter_format" TEXT NOT NULL DEFAULT 'POSITIONAL',
    "components" JSONB NOT NULL,
    "parameter_counts" JSONB NOT NULL,
    "status_reason" TEXT,
    "removed_at" TIMESTAMPTZ(3),
    "synced_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "templates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "business_account_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "access_key" TEXT NOT NULL,
    "secret_hash" TEXT NOT NULL,
    "created_by_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_logs" (
    "id" SERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "operator_id" UUID,
    "operator_email" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "details" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" SERIAL NOT NULL,
    "business_account_id" UUID NOT NULL,
    "api_key_id" UUID,
    "phone_number_id" TEXT NOT NULL,
    "to" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "template_name" TEXT,
    "template_language" TEXT,
    "content" JSONB,
    "status" TEXT NOT NULL,
    "upstream_message_id" TEXT,
    "error_code" INTEGER,
    "error_title" TEXT,
    "error_detail" TEXT,
    "error_category" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "read_at" TIMESTAMPTZ(3),
    "failed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "api_key_id" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "locked_until" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("api_key_id","key")
);

-- CreateTable
CREATE TABLE "conversation_windows" (
    "phone_number_id" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "waba_id" TEXT NOT NULL,
    "last_inbound_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "conversation_windows_pkey" PRIMARY KEY ("phone_number_id","recipient")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" SERIAL NOT NULL,
    "raw_body" BYTEA NOT NULL,
    "signature" TEXT NOT NULL,
    "waba_ids" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'received',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "event_count" INTEGER,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "events" (
    "id" SERIAL NOT NULL,
    "delivery_id" INTEGER NOT NULL,
    "waba_id" TEXT NOT NULL,
    "phone_number_id" TEXT,
    "event_type" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "status" TEXT,
    "recipient" TEXT,
    "message_id" TEXT,
    "upstream_timestamp" TIMESTAMPTZ(3),
    "error_code" INTEGER,
    "error_title" TEXT,
    "error_detail" TEXT,
    "raw" JSONB NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "processed" BOOLEAN NOT NULL DEFAULT false,
    "processed_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "operators_email_key" ON "operators"("email");

-- CreateIndex
CREATE INDEX "operators_organization_id_idx" ON "operators"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");

-- CreateIndex
CREATE INDEX "sessions_operator_id_idx" ON "sessions"("operator_id");

-- CreateIndex
CREATE UNIQUE INDEX "business_accounts_waba_id_key" ON "business_accounts"("waba_id");

-- CreateIndex
CREATE INDEX "business_accounts_organization_id_idx" ON "business_accounts"("organization_id");

-- CreateIndex
CREATE INDEX "phone_numbers_phone_number_id_idx" ON "phone_numbers"("phone_number_id");

-- CreateIndex
CREATE UNIQUE INDEX "phone_numbers_business_account_id_phone_number_id_key" ON "phone_numbers"("business_account_id", "phone_number_id");

-- CreateIndex
CREATE INDEX "templates_business_account_id_status_idx" ON "templates"("business_account_id", "status");

-- CreateIndex
CREATE UNIQUE INDEX "templates_business_account_id_name_language_key" ON "templates"("business_account_id", "name", "language");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_access_key_key" ON "api_keys"("access_key");

-- CreateIndex
CREATE INDEX "api_keys_organization_id_created_at_idx" ON "api_keys"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "api_keys_business_account_id_idx" ON "api_keys"("business_account_id");

-- CreateIndex
CREATE INDEX "audit_logs_organization_id_created_at_id_idx" ON "audit_logs"("organization_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "messages_upstream_message_id_key" ON "messages"("upstream_message_id");

-- CreateIndex
CREATE INDEX "messages_business_account_id_created_at_id_idx" ON "messages"("business_account_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "messages_business_account_id_status_created_at_idx" ON "messages"("business_account_id", "status", "created_at" DESC);

-- CreateIndex
CREATE INDEX "messages_business_account_id_to_created_at_idx" ON "messages"("business_account_id", "to", "created_at" DESC);

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_received_at_idx" ON "webhook_deliveries"("status", "received_at");

-- CreateIndex
CREATE UNIQUE INDEX "events_dedupe_key_key" ON "events"("dedupe_key");

-- CreateIndex
CREATE INDEX "events_waba_id_created_at_id_idx" ON "events"("waba_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_waba_id_kind_created_at_id_idx" ON "events"("waba_id", "kind", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_waba_id_status_created_at_id_idx" ON "events"("waba_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_waba_id_recipient_created_at_id_idx" ON "events"("waba_id", "recipient", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_message_id_idx" ON "events"("message_id");

-- CreateIndex
CREATE INDEX "events_processed_created_at_idx" ON "events"("processed", "created_at");

-- AddForeignKey
ALTER TABLE "operators" ADD CONSTRAINT "operators_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "business_accounts" ADD CONSTRAINT "business_accounts_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "templates" ADD CONSTRAINT "templates_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_logs" ADD CONSTRAINT "audit_logs_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
