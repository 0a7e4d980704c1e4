-- CreateIndex
CREATE INDEX "events_delivery_id_idx" ON "events"("delivery_id");
