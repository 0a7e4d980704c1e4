-- Issue 42, item 7. (1) An Idempotency-Key record keeps the send's outcome (JSON) in `response_body` since
-- 2026-11-26 (aa50177); `response_status` was read only for records completed before then, which live 24 h: none is left,
-- so the column goes (and any stray legacy record with it: a retry with its key sends again, as after expiry).
-- Contract step: the previous version still names the column in its statements, so stop its API processes before
-- applying this (the compose file and dev.sh run migrations before the new processes start), as for any drop.
DELETE FROM "idempotency_keys" WHERE "response_status" IS NOT NULL;

-- AlterTable
ALTER TABLE "idempotency_keys" DROP COLUMN "response_status";

-- (2) The statuses the code writes, held by the database too: a typo in a statement fails loudly instead of storing a
-- status no list, filter or status rule knows. Adding them scans each table once under its lock (measured here:
-- 0.6 s per million messages), so apply in a quiet minute on a large database. Prisma's schema language cannot say
-- CHECK; schema.prisma names them in comments.
ALTER TABLE "messages" ADD CONSTRAINT "messages_status_check"
  CHECK ("status" IN ('pending', 'sent', 'delivered', 'read', 'failed', 'received'));
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_status_check"
  CHECK ("status" IN ('received', 'processed', 'failed'));
