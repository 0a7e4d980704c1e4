-- The statements of src/messages/statements/inbound.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- insert_inbound_messages
insert into "messages" ("business_account_id", "phone_number_id", "direction", "from", "user_id", "handled_by", "type", "content", "status", "upstream_message_id", "updated_at")
select "b"."id", "d"."phoneNumberId", $1 as "direction", "d"."from", "d"."userId", "d"."handledBy", "d"."type", "d"."content", $2 as "status", "d"."wamid", now() as "updatedAt"
from jsonb_to_recordset($3::jsonb) as "d"("wabaId" text, "phoneNumberId" text, "from" text, "userId" text, "handledBy" text, "type" text, "content" jsonb, "wamid" text)
inner join "business_accounts" as "b" on "b"."waba_id" = "d"."wabaId"
on conflict ("upstream_message_id") do nothing;
