-- The statements of src/auth/sessions/sessions.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- session_by_token_hash
select "s"."id", "s"."operator_id" as "operatorId", "s"."token_hash" as "tokenHash", "s"."created_at" as "createdAt", "s"."last_seen_at" as "lastSeenAt", "s"."expires_at" as "expiresAt", "s"."revoked_at" as "revokedAt", "o"."organization_id" as "operatorOrganizationId", "o"."email" as "operatorEmail", "o"."role" as "operatorRole", "o"."platform_admin" as "operatorPlatformAdmin", "o"."removed_at" as "operatorRemovedAt"
from "sessions" as "s"
inner join "operators" as "o" on "o"."id" = "s"."operator_id"
where "s"."token_hash" = $1;

-- SessionsRepository.create
insert into "sessions" ("id", "operator_id", "token_hash", "expires_at", "last_seen_at")
values ($1, $2, $3, $4, $5);

-- SessionsRepository.findById
select "id", "operator_id" as "operatorId", "token_hash" as "tokenHash", "created_at" as "createdAt", "last_seen_at" as "lastSeenAt", "expires_at" as "expiresAt", "revoked_at" as "revokedAt"
from "sessions"
where "id" = $1;

-- SessionsRepository.touch
update "sessions"
set "last_seen_at" = $1
where "id" = $2
returning "id";
-- (stops here on the empty answer: NoResultError)

-- SessionsRepository.revokeAllOf (every session)
update "sessions"
set "revoked_at" = $1
where "operator_id" = $2 and "revoked_at" is null;

-- SessionsRepository.revokeAllOf (but one)
update "sessions"
set "revoked_at" = $1
where "operator_id" = $2 and "revoked_at" is null and "id" <> $3;

-- SessionsRepository.revoke
update "sessions"
set "revoked_at" = $1
where "id" = $2 and "revoked_at" is null;

-- SessionsRepository.deleteEnded
delete from "sessions"
where "id" in (
  select "id"
  from "sessions"
  where ("expires_at" <= $1 or "last_seen_at" <= $2 or "revoked_at" <= $3)
  limit $4);
