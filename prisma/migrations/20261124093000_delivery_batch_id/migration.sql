-- The receiver's group commit that stored a delivery; its queue job is `batch-<batch_id>`. Lets the sweeper
-- re-add exactly that job (a no-op while it is queued, running or retrying) instead of one job per delivery.
ALTER TABLE "webhook_deliveries" ADD COLUMN "batch_id" TEXT;
