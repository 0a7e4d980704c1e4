-- The statements of src/campaigns/campaign-recipients.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- campaign_recipients_claim
update "campaign_recipients" as "r"
set "state" = $1, "claimed_by" = $2, "claimed_at" = now(), "attempts" = "r"."attempts" + $3
from (
  select "id"
  from "campaign_recipients"
  where "campaign_id" = $4 and "state" = $5
  order by "id"
  limit $6
  for update skip locked) as "c"
where "r"."id" = "c"."id"
returning "r"."id", "r"."to", "r"."user_id" as "userId", "r"."components", "r"."attempts";

-- campaign_recipients_attach_messages
update "campaign_recipients" as "r"
set "message_id" = "u"."messageId"
from unnest($1::bigint[], $2::bigint[]) as "u"("id", "messageId")
where "r"."id" = "u"."id";

-- campaign_recipients_skip
update "campaign_recipients" as "r"
set "state" = $1, "skip_reason" = "u"."reason"
from unnest($2::bigint[], $3::text[]) as "u"("id", "reason")
where "r"."id" = "u"."id" and "r"."state" = $4;

-- campaign_recipients_requeue
update "campaign_recipients"
set "state" = $1, "claimed_by" = $2, "claimed_at" = $3
where "id" = any($4) and "state" = $5 and "claimed_by" = $6;

-- campaign_recipients_has_pending
select exists (
  select 1 as "one"
  from "campaign_recipients"
  where "campaign_id" = $1 and "state" = $2) as "pending";

-- campaign_recipients_unsettled
select "r"."id", "r"."message_id" as "messageId", "r"."claimed_by" as "claimedBy", "r"."claimed_at" as "claimedAt"
from "campaign_recipients" as "r"
inner join "messages" as "m" on "m"."id" = "r"."message_id"
where "r"."campaign_id" = $1 and "r"."state" = $2 and "m"."status" = $3
order by "r"."id"
limit $4;
