-- The statements of src/auth/sessions/sessions.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- session_by_token_hash
select "s"."id", "s"."operator_id" as "operatorId", "s"."token_hash" as "tokenHash", "s"."created_at" as "createdAt", "s"."last_seen_at" as "lastSeenAt", "s"."expires_at" as "expiresAt", "s"."revoked_at" as "revokedAt", "o"."organization_id" as "operatorOrganizationId", "o"."email" as "operatorEmail", "o"."role" as "operatorRole", "o"."platform_admin" as "operatorPlatformAdmin", "o"."removed_at" as "operatorRemovedAt"
from "sessions" as "s"
inner join "operators" as "o" on "o"."id" = "s"."operator_id"
where "s"."token_hash" = $1;
