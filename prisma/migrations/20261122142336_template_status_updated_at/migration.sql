-- AlterTable
ALTER TABLE "templates" ADD COLUMN     "status_updated_at" TIMESTAMPTZ(3);
