-- The statements of src/console/invitations/invitations.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- InvitationsRepository.create
insert into "invitations" ("id", "organization_id", "email", "role", "token_hash", "invited_by_id", "expires_at")
values ($1, $2, $3, $4, $5, $6, $7)
returning "id";
-- (stops here on the empty answer: NoResultError)

-- InvitationsRepository.findByTokenHash
select "id", "organization_id" as "organizationId", "email", "role", "token_hash" as "tokenHash", "invited_by_id" as "invitedById", "expires_at" as "expiresAt", "accepted_at" as "acceptedAt", "accepted_by_id" as "acceptedById", "revoked_at" as "revokedAt", "created_at" as "createdAt"
from "invitations"
where "token_hash" = $1;

-- InvitationsRepository.claim
update "invitations"
set "accepted_at" = $1, "accepted_by_id" = $2
where "id" = $3 and "accepted_at" is null and "revoked_at" is null and "expires_at" > $4;

-- InvitationsRepository.listPending
select "i"."id", "i"."organization_id" as "organizationId", "i"."email", "i"."role", "i"."token_hash" as "tokenHash", "i"."invited_by_id" as "invitedById", "i"."expires_at" as "expiresAt", "i"."accepted_at" as "acceptedAt", "i"."accepted_by_id" as "acceptedById", "i"."revoked_at" as "revokedAt", "i"."created_at" as "createdAt", "o"."email" as "inviterEmail"
from "invitations" as "i"
inner join "operators" as "o" on "o"."id" = "i"."invited_by_id"
where "i"."organization_id" = $1 and "i"."accepted_at" is null and "i"."revoked_at" is null and "i"."expires_at" > $2
order by "i"."created_at" desc
limit $3;

-- InvitationsRepository.countPendingLocked
select pg_advisory_xact_lock(hashtext($1)) as "locked";

select count(*) as "n"
from "invitations"
where "organization_id" = $1 and "accepted_at" is null and "revoked_at" is null and "expires_at" > $2;
-- (stops here on the empty answer: NoResultError)

-- InvitationsRepository.findOwned
select "i"."id", "i"."organization_id" as "organizationId", "i"."email", "i"."role", "i"."token_hash" as "tokenHash", "i"."invited_by_id" as "invitedById", "i"."expires_at" as "expiresAt", "i"."accepted_at" as "acceptedAt", "i"."accepted_by_id" as "acceptedById", "i"."revoked_at" as "revokedAt", "i"."created_at" as "createdAt", "o"."email" as "inviterEmail"
from "invitations" as "i"
inner join "operators" as "o" on "o"."id" = "i"."invited_by_id"
where "i"."id" = $1 and "i"."organization_id" = $2;

-- InvitationsRepository.revoke
update "invitations"
set "revoked_at" = $1
where "id" = $2 and "organization_id" = $3 and "accepted_at" is null and "revoked_at" is null;

-- InvitationsRepository.revokeAllSentBy
update "invitations"
set "revoked_at" = $1
where "organization_id" = $2 and "invited_by_id" = $3 and "accepted_at" is null and "revoked_at" is null;
