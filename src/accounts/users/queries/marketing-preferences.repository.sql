-- The statements of src/accounts/users/marketing-preferences.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- marketing_preferences_record
insert into "marketing_preferences" ("business_account_id", "user", "value", "source", "detail", "updated_at")
select "b"."id", "u"."usr", "u"."val", "u"."src", "u"."det", "u"."at"
from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) as "u"("waba", "usr", "val", "src", "det", "at")
inner join "business_accounts" as "b" on "b"."waba_id" = "u"."waba"
order by "b"."id", "u"."usr"
on conflict ("business_account_id", "user")
do update set "value" = "excluded"."value", "source" = "excluded"."source", "detail" = "excluded"."detail", "updated_at" = "excluded"."updated_at"
where "marketing_preferences"."updated_at" <= "excluded"."updated_at";

-- marketing_preferences_follow_users
insert into "marketing_preferences" ("business_account_id", "user", "value", "source", "detail", "updated_at")
select distinct on ("b"."id", "u"."nu") "b"."id", "u"."nu", "m"."value", "m"."source", "m"."detail", "m"."updated_at"
from unnest($1::text[], $2::text[], $3::text[]) as "u"("waba", "old", "nu")
inner join "business_accounts" as "b" on "b"."waba_id" = "u"."waba"
inner join "marketing_preferences" as "m" on "m"."business_account_id" = "b"."id" and "m"."user" = "u"."old"
order by "b"."id", "u"."nu", "m"."updated_at" desc
on conflict ("business_account_id", "user")
do update set "value" = "excluded"."value", "source" = "excluded"."source", "detail" = "excluded"."detail", "updated_at" = "excluded"."updated_at"
where "marketing_preferences"."updated_at" < "excluded"."updated_at";

-- marketing_preference_of
select "value"
from "marketing_preferences"
where "business_account_id" = $1 and "user" = $2;

-- marketing_stopped_among
select "user"
from "marketing_preferences"
where "business_account_id" = $1 and "user" = any($2) and "value" = $3;

-- MarketingPreferencesRepository.ofContact
select "user", "value", "source", "detail", "updated_at" as "updatedAt"
from "marketing_preferences"
where "business_account_id" = $1 and "user" = any($2)
order by "updated_at";

-- MarketingPreferencesRepository.eraseContact
delete from "marketing_preferences"
where "business_account_id" = $1 and "user" = any($2);

-- MarketingPreferencesRepository.page (no filter)
select "user", "value", "source", "detail", "updated_at" as "updatedAt"
from "marketing_preferences"
where "business_account_id" = $1
order by "updated_at" desc, "user"
limit $2
offset $3;

select count(*) as "n"
from "marketing_preferences"
where "business_account_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- MarketingPreferencesRepository.page (every filter)
select "user", "value", "source", "detail", "updated_at" as "updatedAt"
from "marketing_preferences"
where "business_account_id" = $1 and "value" = $2 and "user" = $3
order by "updated_at" desc, "user"
limit $4
offset $5;

select count(*) as "n"
from "marketing_preferences"
where "business_account_id" = $1 and "value" = $2 and "user" = $3;
-- (stops here on the empty answer: NoResultError)
