-- The statements of src/accounts/users/blocked-users.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- blocked_user_exists
select exists (
  select 1 as "one"
  from "blocked_users"
  where "business_account_id" = $1 and "phone_number_id" = $2 and ("user" = $3 or "wa_id" = $4)) as "blocked";

-- blocked_users_among
select "user", "wa_id" as "waId"
from "blocked_users"
where "business_account_id" = $1 and "phone_number_id" = $2 and ("user" = any($3) or "wa_id" = any($4));
