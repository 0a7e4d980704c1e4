-- The statements of src/organizations/organizations.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- OrganizationsRepository.create
insert into "organizations" ("id", "name")
values ($1, $2)
returning "id", "name", "created_at" as "createdAt", "content_retention_days" as "contentRetentionDays", "content_scrubbed_through" as "contentScrubbedThrough";
-- (stops here on the empty answer: NoResultError)

-- OrganizationsRepository.get
select "id", "name", "created_at" as "createdAt", "content_retention_days" as "contentRetentionDays", "content_scrubbed_through" as "contentScrubbedThrough"
from "organizations"
where "id" = $1;
-- (stops here on the empty answer: NoResultError)

-- OrganizationsRepository.setContentRetention
update "organizations"
set "content_retention_days" = $1
where "id" = $2
returning "id", "name", "created_at" as "createdAt", "content_retention_days" as "contentRetentionDays", "content_scrubbed_through" as "contentScrubbedThrough";
-- (stops here on the empty answer: NoResultError)

-- OrganizationsRepository.contentRetentionDue
select "id", coalesce("content_retention_days", $1) as "days", "content_scrubbed_through" as "scrubbedThrough"
from "organizations"
where coalesce("content_retention_days", $2) > $3
order by "id";

-- OrganizationsRepository.markScrubbedThrough
update "organizations"
set "content_scrubbed_through" = $1
where "id" = $2 and ("content_scrubbed_through" is null or "content_scrubbed_through" < $3);
