-- Security, second audit (issue 29).
-- Platform administrators are a stored flag granted out of band (npm run platform-admin -- grant <email>),
-- never derived from an email anyone can register or be invited with (ADMIN_EMAILS is no longer read).
ALTER TABLE "operators" ADD COLUMN "platform_admin" BOOLEAN NOT NULL DEFAULT false;
