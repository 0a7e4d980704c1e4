-- The statements of src/auth/api-keys/api-keys.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- api_key_for_authentication
select "k"."id", "k"."organization_id" as "organizationId", "k"."business_account_id" as "businessAccountId", "k"."name", "k"."access_key" as "accessKey", "k"."secret_hash" as "secretHash", "k"."created_by_id" as "createdById", "k"."created_at" as "createdAt", "k"."last_used_at" as "lastUsedAt", "k"."revoked_at" as "revokedAt", "b"."waba_id" as "wabaId", "b"."disconnected_at" as "accountDisconnectedAt", "b"."access_token_encrypted" as "accountAccessTokenEncrypted", "b"."held_since" as "accountHeldSince", "b"."readable_until" as "accountReadableUntil"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."access_key" = $1;

-- ApiKeysRepository.touchLastUsed
update "api_keys"
set "last_used_at" = $1
where "id" = $2 and ("last_used_at" is null or "last_used_at" < $3);

-- ApiKeysRepository.countActiveLocked
select pg_advisory_xact_lock(hashtext($1)) as "locked";

select count(*) as "n"
from "api_keys"
where "business_account_id" = $1 and "revoked_at" is null;
-- (stops here on the empty answer: NoResultError)

-- ApiKeysRepository.create
insert into "api_keys" ("id", "organization_id", "business_account_id", "name", "access_key", "secret_hash", "created_by_id")
values ($1, $2, $3, $4, $5, $6, $7)
returning "id";
-- (stops here on the empty answer: NoResultError)

-- ApiKeysRepository.page (every account)
select "k"."id", "k"."organization_id" as "organizationId", "k"."business_account_id" as "businessAccountId", "k"."name", "k"."access_key" as "accessKey", "k"."secret_hash" as "secretHash", "k"."created_by_id" as "createdById", "k"."created_at" as "createdAt", "k"."last_used_at" as "lastUsedAt", "k"."revoked_at" as "revokedAt", "b"."waba_id" as "wabaId"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."organization_id" = $1
order by "k"."created_at" desc, "k"."id" desc
limit $2
offset $3;

select count(*) as "n"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."organization_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- ApiKeysRepository.page (one account)
select "k"."id", "k"."organization_id" as "organizationId", "k"."business_account_id" as "businessAccountId", "k"."name", "k"."access_key" as "accessKey", "k"."secret_hash" as "secretHash", "k"."created_by_id" as "createdById", "k"."created_at" as "createdAt", "k"."last_used_at" as "lastUsedAt", "k"."revoked_at" as "revokedAt", "b"."waba_id" as "wabaId"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."organization_id" = $1 and "b"."waba_id" = $2
order by "k"."created_at" desc, "k"."id" desc
limit $3
offset $4;

select count(*) as "n"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."organization_id" = $1 and "b"."waba_id" = $2;
-- (stops here on the empty answer: NoResultError)

-- ApiKeysRepository.findOwned
select "k"."id", "k"."organization_id" as "organizationId", "k"."business_account_id" as "businessAccountId", "k"."name", "k"."access_key" as "accessKey", "k"."secret_hash" as "secretHash", "k"."created_by_id" as "createdById", "k"."created_at" as "createdAt", "k"."last_used_at" as "lastUsedAt", "k"."revoked_at" as "revokedAt", "b"."waba_id" as "wabaId"
from "api_keys" as "k"
inner join "business_accounts" as "b" on "b"."id" = "k"."business_account_id"
where "k"."organization_id" = $1 and "k"."id" = $2;

-- ApiKeysRepository.revoke
update "api_keys"
set "revoked_at" = $1
where "id" = $2 and "organization_id" = $3
returning "id";
-- (stops here on the empty answer: NoResultError)

-- ApiKeysRepository.revokeAllOf
update "api_keys"
set "revoked_at" = $1
where "business_account_id" = $2 and "revoked_at" is null
returning "access_key";

-- ApiKeysRepository.revokeAllCreatedBy
update "api_keys"
set "revoked_at" = $1
where "organization_id" = $2 and "created_by_id" = $3 and "revoked_at" is null
returning "id", "name", "access_key";
