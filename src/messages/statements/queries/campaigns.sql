-- The statements of src/messages/statements/campaigns.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- insert_campaign_messages
insert into "messages" ("business_account_id", "api_key_id", "phone_number_id", "to", "type", "template_name", "template_language", "content", "user_id", "upstream_api", "campaign_id", "status", "updated_at")
select "u"."b", "u"."k", "u"."p", "u"."t", "u"."ty", "u"."tn", "u"."tl", "u"."c", "u"."ui", "u"."ua", $1::bigint as "campaignId", $2 as "status", now() as "updatedAt"
from unnest($3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::text[], $12::text[])
WITH ORDINALITY as "u"("b", "k", "p", "t", "ty", "tn", "tl", "c", "ui", "ua", "ord")
order by "u"."ord"
returning "id";

-- mark_messages_failed
update "messages" as "m"
set "status" = $1, "failed_at" = $2, "error_code" = "u"."code", "error_title" = "u"."title", "error_detail" = "u"."detail", "error_category" = "u"."category", "updated_at" = $3
from unnest($4::bigint[], $5::int[], $6::text[], $7::text[], $8::text[]) as "u"("id", "code", "title", "detail", "category")
where ("m"."id" = any(array((
        select "l"."id"
        from "messages" as "l"
        where "l"."id" = any($9::bigint[])
        order by "l"."id"
        for update))) and "m"."id" = "u"."id" and ("m"."status" = $10 and "m"."business_account_id" = $11::uuid) is true);
