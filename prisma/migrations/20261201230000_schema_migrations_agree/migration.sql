-- schema.prisma and the migrations agree again (`tsx prisma/migrate.ts diff` exits 0, and ./scripts/test.sh fails
-- when they drift). 20261126100000_meta_2026_round_two declared the account foreign keys of blocked_users and
-- marketing_preferences inline (NO ACTION, PostgreSQL's names) and an index whose name PostgreSQL cut at 63 bytes;
-- this gives them the names and rules the schema declares (ON DELETE RESTRICT ON UPDATE CASCADE).

-- DropForeignKey
ALTER TABLE "blocked_users" DROP CONSTRAINT "blocked_users_business_account_id_fkey";

-- DropForeignKey
ALTER TABLE "marketing_preferences" DROP CONSTRAINT "marketing_preferences_business_account_id_fkey";

-- AddForeignKey
ALTER TABLE "marketing_preferences" ADD CONSTRAINT "marketing_preferences_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "blocked_users" ADD CONSTRAINT "blocked_users_business_account_id_fkey" FOREIGN KEY ("business_account_id") REFERENCES "business_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- RenameIndex
ALTER INDEX "blocked_users_business_account_id_phone_number_id_created_at_id" RENAME TO "blocked_users_business_account_id_phone_number_id_created_a_idx";
