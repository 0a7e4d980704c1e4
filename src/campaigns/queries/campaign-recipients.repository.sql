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

-- CampaignRecipientsRepository.insertAll
insert into "campaign_recipients" ("campaign_id", "position", "to", "user_id", "components")
select $1::bigint as "campaign_id", "r"."ord" - $2 as "position", "r"."to", "r"."userId", "r"."components"
from unnest($3::text[], $4::text[], $5::jsonb[])
WITH ORDINALITY as "r"("to", "userId", "components", "ord");

-- CampaignRecipientsRepository.cancelPending (one campaign)
update "campaign_recipients"
set "state" = $1
where "campaign_id" in ($2) and "state" = $3;

-- CampaignRecipientsRepository.cancelPending (several campaigns)
update "campaign_recipients"
set "state" = $1
where "campaign_id" in ($2, $3) and "state" = $4;

-- CampaignRecipientsRepository.requeueFailed
update "campaign_recipients" as "r"
set "state" = $1, "claimed_by" = $2, "claimed_at" = $3, "attempts" = $4
from "messages" as "m"
where "r"."campaign_id" = $5 and "r"."state" = $6 and "m"."id" = "r"."message_id" and "m"."status" = $7;

-- CampaignRecipientsRepository.counts
select "s"."status", count(*) as "n"
from (
  select case when "r"."state" <> $1 then "r"."state" when ("m"."status" is null or "m"."status" = $2) then $3 else "m"."status" end as "status"
  from "campaign_recipients" as "r"
  left join "messages" as "m" on "m"."id" = "r"."message_id"
  where "r"."campaign_id" = $4) as "s"
group by "s"."status";

-- CampaignRecipientsRepository.page (every status)
select "r"."id", "r"."position", "r"."to", "r"."user_id" as "userId", case when "r"."state" <> $1 then "r"."state" when ("m"."status" is null or "m"."status" = $2) then $3 else "m"."status" end as "status", "r"."attempts", "r"."skip_reason" as "skipReason", "r"."message_id" as "messageId", "m"."upstream_message_id" as "upstreamMessageId", "m"."error_code" as "errorCode", "m"."error_title" as "errorTitle", "m"."error_detail" as "errorDetail", "m"."error_category" as "errorCategory"
from "campaign_recipients" as "r"
left join "messages" as "m" on "m"."id" = "r"."message_id"
where "r"."campaign_id" = $4
order by "r"."position"
limit $5
offset $6;

select count(*) as "n"
from "campaign_recipients" as "r"
left join "messages" as "m" on "m"."id" = "r"."message_id"
where "r"."campaign_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- CampaignRecipientsRepository.page (one status)
select "r"."id", "r"."position", "r"."to", "r"."user_id" as "userId", case when "r"."state" <> $1 then "r"."state" when ("m"."status" is null or "m"."status" = $2) then $3 else "m"."status" end as "status", "r"."attempts", "r"."skip_reason" as "skipReason", "r"."message_id" as "messageId", "m"."upstream_message_id" as "upstreamMessageId", "m"."error_code" as "errorCode", "m"."error_title" as "errorTitle", "m"."error_detail" as "errorDetail", "m"."error_category" as "errorCategory"
from "campaign_recipients" as "r"
left join "messages" as "m" on "m"."id" = "r"."message_id"
where "r"."campaign_id" = $4 and case when "r"."state" <> $5 then "r"."state" when ("m"."status" is null or "m"."status" = $6) then $7 else "m"."status" end = $8
order by "r"."position"
limit $9
offset $10;

select count(*) as "n"
from "campaign_recipients" as "r"
left join "messages" as "m" on "m"."id" = "r"."message_id"
where "r"."campaign_id" = $1 and case when "r"."state" <> $2 then "r"."state" when ("m"."status" is null or "m"."status" = $3) then $4 else "m"."status" end = $5;
-- (stops here on the empty answer: NoResultError)

-- CampaignRecipientsRepository.ofContact
select "c"."id" as "campaignId", "c"."name" as "campaignName", "c"."template_name" as "templateName", "c"."created_at" as "createdAt", "r"."to", "r"."user_id" as "userId", "r"."components", "r"."state", "r"."skip_reason" as "skipReason", "r"."message_id" as "messageId"
from "campaign_recipients" as "r"
inner join "campaigns" as "c" on "c"."id" = "r"."campaign_id"
where "c"."business_account_id" = $1 and ("r"."to" = any($2) or "r"."user_id" = any($3))
order by "r"."id"
limit $4;

-- CampaignRecipientsRepository.eraseContact
update "campaign_recipients"
set "to" = $1, "user_id" = $2, "components" = $3, "skip_reason" = case when "state" = $4 then $5 else "skip_reason" end, "state" = case when "state" = $6 then $7 else "state" end
where "campaign_id" in (
  select "id"
  from "campaigns"
  where "business_account_id" = $8) and ("to" = any($9) or "user_id" = any($10));
