-- Meta since mid-2026 (issue 38): an inbound message that arrived on the `standby` webhook field (while Meta Business
-- Agent handled the conversation) says so; null when the business app held it, and for outbound messages.
ALTER TABLE "messages" ADD COLUMN "handled_by" TEXT;
