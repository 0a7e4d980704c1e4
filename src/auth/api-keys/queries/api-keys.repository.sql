-- The statements of src/auth/api-keys/api-keys.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- api_key_for_authentication
select "k"."id", "k"."organization_id" as "organizationId", "k"."business_account_id" as "businessAccountId", "k"."name", "k"."access_key" as "accessKey", "k"."secret_hash" as "secretHash", "k"."created_by_id" as "createdById", "k"."created_at" as "createdAt", "k"."last_used_at" as "lastUsedAt", "k"."revoked_at" as "revokedAt", "b"."waba_id" as "wabaId", "b"."disconnected_at" as "accountDisconnectedAt", "b"."access_token_encrypted" as "accountAccessTokenEncrypted", "b"."held_since" as "accountHeldSince", "b"."readable_until" as "accountReadableUntil"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."access_key" = $1;
