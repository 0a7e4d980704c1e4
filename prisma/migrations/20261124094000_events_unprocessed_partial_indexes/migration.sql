-- Only unprocessed events are ever looked up by delivery (the worker's pending pass) or by processed (the
-- sweeper's waiting statuses), and almost every event is stored already processed. Partial indexes over the
-- unprocessed ones stay tiny and cost an event stored processed nothing (two index entries fewer per event).
-- Prisma's schema language cannot express them; they live here (like the event_counts triggers).
DROP INDEX "events_delivery_id_idx";
DROP INDEX "events_processed_created_at_idx";
CREATE INDEX "events_unprocessed_delivery_idx" ON "events" ("delivery_id") WHERE NOT "processed";
CREATE INDEX "events_unprocessed_created_at_idx" ON "events" ("created_at") WHERE NOT "processed";
