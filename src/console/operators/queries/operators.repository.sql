-- The statements of src/console/operators/operators.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- OperatorsRepository.create
insert into "operators" ("id", "organization_id", "email", "password_hash", "role")
values ($1, $2, $3, $4, $5)
on conflict ("email") do nothing
returning "id";

select "o"."id", "o"."organization_id" as "organizationId", "o"."email", "o"."password_hash" as "passwordHash", "o"."role", "o"."last_login_at" as "lastLoginAt", "o"."removed_at" as "removedAt", "o"."platform_admin" as "platformAdmin", "o"."created_at" as "createdAt", "g"."name" as "organizationName"
from "operators" as "o"
inner join "organizations" as "g" on "g"."id" = "o"."organization_id"
where "o"."id" = $1;

-- OperatorsRepository.findByEmail
select "o"."id", "o"."organization_id" as "organizationId", "o"."email", "o"."password_hash" as "passwordHash", "o"."role", "o"."last_login_at" as "lastLoginAt", "o"."removed_at" as "removedAt", "o"."platform_admin" as "platformAdmin", "o"."created_at" as "createdAt", "g"."name" as "organizationName"
from "operators" as "o"
inner join "organizations" as "g" on "g"."id" = "o"."organization_id"
where "o"."email" = $1;

-- OperatorsRepository.findById
select "o"."id", "o"."organization_id" as "organizationId", "o"."email", "o"."password_hash" as "passwordHash", "o"."role", "o"."last_login_at" as "lastLoginAt", "o"."removed_at" as "removedAt", "o"."platform_admin" as "platformAdmin", "o"."created_at" as "createdAt", "g"."name" as "organizationName"
from "operators" as "o"
inner join "organizations" as "g" on "g"."id" = "o"."organization_id"
where "o"."id" = $1;

-- OperatorsRepository.setPlatformAdmin
update "operators"
set "platform_admin" = $1
where "email" = $2 and "removed_at" is null;

-- OperatorsRepository.listPlatformAdmins
select "email"
from "operators"
where "platform_admin" = $1
order by "email";

-- OperatorsRepository.pageMembers
select "id", "organization_id" as "organizationId", "email", "password_hash" as "passwordHash", "role", "last_login_at" as "lastLoginAt", "removed_at" as "removedAt", "platform_admin" as "platformAdmin", "created_at" as "createdAt"
from "operators"
where "organization_id" = $1 and "removed_at" is null
order by "created_at", "id"
limit $2
offset $3;

select count(*) as "n"
from "operators"
where "organization_id" = $1 and "removed_at" is null;
-- (stops here on the empty answer: NoResultError)

-- OperatorsRepository.findMember
select "id", "organization_id" as "organizationId", "email", "password_hash" as "passwordHash", "role", "last_login_at" as "lastLoginAt", "removed_at" as "removedAt", "platform_admin" as "platformAdmin", "created_at" as "createdAt"
from "operators"
where "id" = $1 and "organization_id" = $2 and "removed_at" is null;

-- OperatorsRepository.emailsOf
select "id", "email"
from "operators"
where "organization_id" = $1 and "id" in ($2, $3);

-- OperatorsRepository.countOwnersLocked
select pg_advisory_xact_lock(hashtext($1)) as "locked";

select count(*) as "n"
from "operators"
where "organization_id" = $1 and "role" = $2 and "removed_at" is null;
-- (stops here on the empty answer: NoResultError)

-- OperatorsRepository.setRole
update "operators"
set "role" = $1
where "id" = $2 and "organization_id" = $3 and "removed_at" is null
returning "id", "organization_id" as "organizationId", "email", "password_hash" as "passwordHash", "role", "last_login_at" as "lastLoginAt", "removed_at" as "removedAt", "platform_admin" as "platformAdmin", "created_at" as "createdAt";

-- OperatorsRepository.markRemoved
update "operators"
set "removed_at" = $1
where "id" = $2 and "organization_id" = $3 and "removed_at" is null;

-- OperatorsRepository.recordLogin
update "operators"
set "last_login_at" = $1
where "id" = $2
returning "id";
-- (stops here on the empty answer: NoResultError)

-- OperatorsRepository.replacePasswordHash
update "operators"
set "password_hash" = $1
where "id" = $2 and "password_hash" = $3;

-- OperatorsRepository.setPasswordHash
update "operators"
set "password_hash" = $1
where "id" = $2
returning "id";
-- (stops here on the empty answer: NoResultError)

-- OperatorsRepository.upgradePasswordHash
update "operators"
set "password_hash" = $1
where "id" = $2 and "password_hash" = $3;
