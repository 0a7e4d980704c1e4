-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "accepted_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "webhook_deliveries_waba_ids_idx" ON "webhook_deliveries" USING GIN ("waba_ids");
