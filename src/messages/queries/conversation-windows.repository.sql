-- The statements of src/messages/conversation-windows.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- open_conversation_windows
insert into "conversation_windows" ("phone_number_id", "recipient", "waba_id", "last_inbound_at")
select "w"."p", "w"."r", "w"."b", "w"."t"
from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) as "w"("p", "r", "b", "t")
on conflict ("phone_number_id", "recipient")
do update set "last_inbound_at" = greatest("conversation_windows"."last_inbound_at", "excluded"."last_inbound_at"), "waba_id" = "excluded"."waba_id";

-- conversation_windows_follow_users
insert into "conversation_windows" ("phone_number_id", "recipient", "waba_id", "last_inbound_at")
select "w"."phone_number_id", "u"."nu", "w"."waba_id", max("w"."last_inbound_at") as "at"
from unnest($1::text[], $2::text[], $3::text[]) as "u"("waba", "old", "nu")
inner join "conversation_windows" as "w" on "w"."waba_id" = "u"."waba" and "w"."recipient" = "u"."old"
group by "w"."phone_number_id", "u"."nu", "w"."waba_id"
order by "w"."phone_number_id", "u"."nu"
on conflict ("phone_number_id", "recipient")
do update set "last_inbound_at" = greatest("conversation_windows"."last_inbound_at", "excluded"."last_inbound_at");

-- conversation_window_last_inbound
select "last_inbound_at" as "lastInboundAt"
from "conversation_windows"
where "phone_number_id" = $1 and "recipient" = $2;

-- ConversationWindowsRepository.ofContact
select "phone_number_id" as "phoneNumberId", "recipient", "last_inbound_at" as "lastInboundAt"
from "conversation_windows"
where "waba_id" = $1 and "recipient" = any($2);

-- ConversationWindowsRepository.eraseContact
delete from "conversation_windows"
where "waba_id" = $1 and "recipient" = any($2);
