-- Content retention per organization (issue 41, item 3). `content_retention_days`: the organization's own setting
-- (NULL: the service's CONTENT_RETENTION_DAYS; 0: kept forever); `content_scrubbed_through`: how far back the
-- scheduled pass has scrubbed (every message, event and raw body of the organization created before it holds no
-- content any more), so each pass reads only what aged out since the last. Nullable columns without defaults: no
-- table rewrite.

-- AlterTable
ALTER TABLE "organizations" ADD COLUMN "content_retention_days" INTEGER,
ADD COLUMN "content_scrubbed_through" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "messages" ADD COLUMN "content_scrubbed_at" TIMESTAMPTZ(3);
