-- Security, second audit (issue 29): the operator lifecycle (finding 3).
-- Roles are owner | admin | member (docs/security.md has the table of who may do what). Existing rows keep theirs.
-- last_login_at: shown by GET /organization/members. removed_at: DELETE /organization/members/{id} keeps the row
-- (the key pairs and audit entries it made stay attributed to it) but it can never sign in again.
ALTER TABLE "operators" ADD COLUMN "last_login_at" TIMESTAMPTZ(3);
ALTER TABLE "operators" ADD COLUMN "removed_at" TIMESTAMPTZ(3);
ALTER TABLE "operators" DROP CONSTRAINT "operators_role_check";
ALTER TABLE "operators" ADD CONSTRAINT "operators_role_check" CHECK ("role" IN ('owner', 'admin', 'member'));
ALTER TABLE "invitations" DROP CONSTRAINT "invitations_role_check";
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_role_check" CHECK ("role" IN ('owner', 'admin', 'member'));

-- One-time password-reset links an owner issues for an operator of its organization: only the SHA-256 of the
-- token is stored; used once, expiring (PASSWORD_RESET_TTL_SECONDS), revoked by a newer link or the operator's removal.
CREATE TABLE "password_resets" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "operator_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "issued_by_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "password_resets_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "password_resets_token_hash_key" ON "password_resets"("token_hash");
CREATE INDEX "password_resets_operator_id_idx" ON "password_resets"("operator_id");
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_operator_id_fkey" FOREIGN KEY ("operator_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_issued_by_id_fkey" FOREIGN KEY ("issued_by_id") REFERENCES "operators"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Business-account ownership (finding 5). held_since: when the organization holding the account took it over from
-- another one (null: held since it was connected); the holder reads nothing stored before it (the previous
-- holder's messages, events and deliveries). readable_until: the holder's credentials failed their check, or it
-- disconnected the account: it reads nothing stored after that until it proves a token again (null: no cut-off).
ALTER TABLE "business_accounts" ADD COLUMN "held_since" TIMESTAMPTZ(3);
ALTER TABLE "business_accounts" ADD COLUMN "readable_until" TIMESTAMPTZ(3);
-- Accounts already disconnected or with rejected credentials get their cut-off now (what arrived before stays readable).
UPDATE "business_accounts" SET "readable_until" = COALESCE("disconnected_at", now()) WHERE "disconnected_at" IS NOT NULL OR "credentials_valid" = false;
