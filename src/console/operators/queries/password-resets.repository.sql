-- The statements of src/console/operators/password-resets.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- PasswordResetsRepository.create
insert into "password_resets" ("id", "organization_id", "operator_id", "token_hash", "issued_by_id", "expires_at")
values ($1, $2, $3, $4, $5, $6)
returning "id", "organization_id" as "organizationId", "operator_id" as "operatorId", "token_hash" as "tokenHash", "issued_by_id" as "issuedById", "expires_at" as "expiresAt", "used_at" as "usedAt", "revoked_at" as "revokedAt", "created_at" as "createdAt";
-- (stops here on the empty answer: NoResultError)

-- PasswordResetsRepository.findByTokenHash
select "id", "organization_id" as "organizationId", "operator_id" as "operatorId", "token_hash" as "tokenHash", "issued_by_id" as "issuedById", "expires_at" as "expiresAt", "used_at" as "usedAt", "revoked_at" as "revokedAt", "created_at" as "createdAt"
from "password_resets"
where "token_hash" = $1;

-- PasswordResetsRepository.claim
update "password_resets"
set "used_at" = $1
where "id" = $2 and "used_at" is null and "revoked_at" is null and "expires_at" > $3;

-- PasswordResetsRepository.revokeAllOf
update "password_resets"
set "revoked_at" = $1
where "organization_id" = $2 and "operator_id" = $3 and "used_at" is null and "revoked_at" is null;
