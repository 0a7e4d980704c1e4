-- When the stored category was decided (Meta's time of a template_category_update, or the start of the sync
-- that read it): a category webhook older than that changes nothing, as for the status.
ALTER TABLE "templates" ADD COLUMN "category_updated_at" TIMESTAMPTZ(3);
