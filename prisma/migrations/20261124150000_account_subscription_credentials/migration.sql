-- Issue 14, parts 1 and 5: whether this app is subscribed to the business account's webhooks
-- (POST/GET /{waba-id}/subscribed_apps) and whether Meta still accepts the stored token.
-- credentials_valid defaults to true: accounts connected before this migration were valid when connected,
-- and the worker's first credential check (credentials_checked_at IS NULL) confirms or refutes it.
ALTER TABLE "business_accounts"
  ADD COLUMN "webhooks_subscribed" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "webhooks_checked_at" TIMESTAMPTZ(3),
  ADD COLUMN "credentials_valid" BOOLEAN NOT NULL DEFAULT true,
  ADD COLUMN "credentials_checked_at" TIMESTAMPTZ(3),
  ADD COLUMN "credentials_error" TEXT;

-- The send path's pre-send check reads the account's state through the API processes' send-context cache
-- (src/messages/send/send-context.cache.ts): a change to a business account (credentials rejected by the
-- worker's scheduled check, a token replaced, …) NOTIFYs `send_context` with its id, like phone numbers and
-- templates do (migration 20261124090000_send_context_notify), so every API process drops its entries at once.
CREATE FUNCTION "notify_send_context_account"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('send_context', NEW.id::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER "business_accounts_notify_send_context" AFTER UPDATE ON "business_accounts"
  FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION "notify_send_context_account"();
