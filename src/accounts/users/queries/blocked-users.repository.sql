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

-- blocked_users_follow_users
insert into "blocked_users" ("business_account_id", "phone_number_id", "user", "wa_id", "blocked_by_id", "created_at")
select distinct on ("b"."id", "k"."phone_number_id", "u"."nu") "b"."id", "k"."phone_number_id", "u"."nu", $1 as "wa_id", "k"."blocked_by_id", "k"."created_at"
from unnest($2::text[], $3::text[], $4::text[]) as "u"("waba", "old", "nu")
inner join "business_accounts" as "b" on "b"."waba_id" = "u"."waba"
inner join "blocked_users" as "k" on "k"."business_account_id" = "b"."id" and ("k"."user" = "u"."old" or "k"."wa_id" = "u"."old")
order by "b"."id", "k"."phone_number_id", "u"."nu", "k"."created_at"
on conflict do nothing;

-- BlockedUsersRepository.add
insert into "blocked_users" ("business_account_id", "phone_number_id", "user", "wa_id", "blocked_by_id")
values ($1, $2, $3, $4, $5)
on conflict do nothing;

-- BlockedUsersRepository.remove
delete from "blocked_users"
where "business_account_id" = $1 and "phone_number_id" = $2 and ("user" = $3 or "wa_id" = $4);

-- BlockedUsersRepository.ofContact
select "phone_number_id" as "phoneNumberId", "user", "wa_id" as "waId", "blocked_by_id" as "blockedById", "created_at" as "createdAt"
from "blocked_users"
where "business_account_id" = $1 and ("user" = any($2) or "wa_id" = any($3))
order by "created_at";

-- BlockedUsersRepository.eraseContact
delete from "blocked_users"
where "business_account_id" = $1 and ("user" = any($2) or "wa_id" = any($3));

-- BlockedUsersRepository.page
select "phone_number_id" as "phoneNumberId", "user", "wa_id" as "waId", "blocked_by_id" as "blockedById", "created_at" as "createdAt"
from "blocked_users"
where "business_account_id" = $1 and "phone_number_id" = $2
order by "created_at" desc, "user"
limit $3
offset $4;

select count(*) as "n"
from "blocked_users"
where "business_account_id" = $1 and "phone_number_id" = $2;
-- (stops here on the empty answer: NoResultError)
