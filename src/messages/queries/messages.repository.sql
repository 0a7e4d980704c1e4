-- The statements of src/messages/messages.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- MessagesRepository.analytics (no filter)
select cast(count(*) as integer) as "total", cast(count(*) filter(
    where "upstream_message_id" is not null) as integer) as "sent", cast(count(*) filter(
    where ("status" in ($1, $2) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
    where "status" = $3) as integer) as "read", cast(count(*) filter(
    where "status" = $4) as integer) as "failed"
from "messages"
where ("business_account_id" = $5::uuid and "created_at" >= $6 and "created_at" < $7 and "direction" = $8);

with "buckets" as (
  select timezone('UTC', generate_series(date_trunc('day', timezone('UTC', $1::timestamptz)), timezone('UTC', $2::timestamptz), '1 day'::interval)) as "bucket"), "agg" as (
  select timezone('UTC', date_trunc('day', timezone('UTC', "created_at"))) as "bucket", cast(count(*) filter(
      where "upstream_message_id" is not null) as integer) as "sent", cast(count(*) filter(
      where ("status" in ($3, $4) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
      where "status" = $5) as integer) as "read", cast(count(*) filter(
      where "status" = $6) as integer) as "failed"
  from "messages"
  where ("business_account_id" = $7::uuid and "created_at" >= $8 and "created_at" < $9 and "direction" = $10)
  group by timezone('UTC', date_trunc('day', timezone('UTC', "created_at"))))
select "b"."bucket", cast(coalesce("a"."sent", 0) as integer) as "sent", cast(coalesce("a"."delivered", 0) as integer) as "delivered", cast(coalesce("a"."read", 0) as integer) as "read", cast(coalesce("a"."failed", 0) as integer) as "failed"
from "buckets" as "b"
left join "agg" as "a" on "a"."bucket" = "b"."bucket"
where "b"."bucket" < $11
order by "b"."bucket";

select "error_code" as "code", "error_title" as "title", cast(count(*) as integer) as "count"
from "messages"
where (("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "direction" = $4) and "status" = $5)
group by "error_code", "error_title"
order by "count" desc, "code" asc nulls last
limit $6;

select "template_name" as "templateName", cast(count(*) as integer) as "total", cast(count(*) filter(
    where ("status" in ($1, $2) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
    where "status" = $3) as integer) as "read", cast(count(*) filter(
    where "status" = $4) as integer) as "failed"
from "messages"
where (("business_account_id" = $5::uuid and "created_at" >= $6 and "created_at" < $7 and "direction" = $8) and "template_name" is not null)
group by "template_name"
order by "total" desc, "template_name"
limit $9;

select timezone('UTC', date_trunc('day', timezone('UTC', "created_at"))) as "bucket", "pricing_category" as "category", "pricing_type" as "type", cast(count(*) as integer) as "count"
from "messages"
where (("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "direction" = $4) and ("pricing_category" is not null or "pricing_type" is not null))
group by timezone('UTC', date_trunc('day', timezone('UTC', "created_at"))), "pricing_category", "pricing_type"
order by "bucket";

select timezone('UTC', date_trunc('day', timezone('UTC', "created_at"))) as "bucket", cast(count(*) as integer) as "count"
from "messages"
where ("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "direction" = $4)
group by timezone('UTC', date_trunc('day', timezone('UTC', "created_at")))
order by "bucket";

-- MessagesRepository.analytics (every filter)
select cast(count(*) as integer) as "total", cast(count(*) filter(
    where "upstream_message_id" is not null) as integer) as "sent", cast(count(*) filter(
    where ("status" in ($1, $2) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
    where "status" = $3) as integer) as "read", cast(count(*) filter(
    where "status" = $4) as integer) as "failed"
from "messages"
where ("business_account_id" = $5::uuid and "created_at" >= $6 and "created_at" < $7 and "phone_number_id" = $8 and "template_name" = $9 and "type" = $10 and "direction" = $11);

with "buckets" as (
  select timezone('UTC', generate_series(date_trunc('hour', timezone('UTC', $1::timestamptz)), timezone('UTC', $2::timestamptz), '1 hour'::interval)) as "bucket"), "agg" as (
  select timezone('UTC', date_trunc('hour', timezone('UTC', "created_at"))) as "bucket", cast(count(*) filter(
      where "upstream_message_id" is not null) as integer) as "sent", cast(count(*) filter(
      where ("status" in ($3, $4) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
      where "status" = $5) as integer) as "read", cast(count(*) filter(
      where "status" = $6) as integer) as "failed"
  from "messages"
  where ("business_account_id" = $7::uuid and "created_at" >= $8 and "created_at" < $9 and "phone_number_id" = $10 and "template_name" = $11 and "type" = $12 and "direction" = $13)
  group by timezone('UTC', date_trunc('hour', timezone('UTC', "created_at"))))
select "b"."bucket", cast(coalesce("a"."sent", 0) as integer) as "sent", cast(coalesce("a"."delivered", 0) as integer) as "delivered", cast(coalesce("a"."read", 0) as integer) as "read", cast(coalesce("a"."failed", 0) as integer) as "failed"
from "buckets" as "b"
left join "agg" as "a" on "a"."bucket" = "b"."bucket"
where "b"."bucket" < $14
order by "b"."bucket";

select "error_code" as "code", "error_title" as "title", cast(count(*) as integer) as "count"
from "messages"
where (("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "phone_number_id" = $4 and "template_name" = $5 and "type" = $6 and "direction" = $7) and "status" = $8)
group by "error_code", "error_title"
order by "count" desc, "code" asc nulls last
limit $9;

select "template_name" as "templateName", cast(count(*) as integer) as "total", cast(count(*) filter(
    where ("status" in ($1, $2) or "delivered_at" is not null)) as integer) as "delivered", cast(count(*) filter(
    where "status" = $3) as integer) as "read", cast(count(*) filter(
    where "status" = $4) as integer) as "failed"
from "messages"
where (("business_account_id" = $5::uuid and "created_at" >= $6 and "created_at" < $7 and "phone_number_id" = $8 and "template_name" = $9 and "type" = $10 and "direction" = $11) and "template_name" is not null)
group by "template_name"
order by "total" desc, "template_name"
limit $12;

select timezone('UTC', date_trunc('hour', timezone('UTC', "created_at"))) as "bucket", "pricing_category" as "category", "pricing_type" as "type", cast(count(*) as integer) as "count"
from "messages"
where (("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "phone_number_id" = $4 and "template_name" = $5 and "type" = $6 and "direction" = $7) and ("pricing_category" is not null or "pricing_type" is not null))
group by timezone('UTC', date_trunc('hour', timezone('UTC', "created_at"))), "pricing_category", "pricing_type"
order by "bucket";

select timezone('UTC', date_trunc('hour', timezone('UTC', "created_at"))) as "bucket", cast(count(*) as integer) as "count"
from "messages"
where ("business_account_id" = $1::uuid and "created_at" >= $2 and "created_at" < $3 and "phone_number_id" = $4 and "template_name" = $5 and "type" = $6 and "direction" = $7)
group by timezone('UTC', date_trunc('hour', timezone('UTC', "created_at")))
order by "bucket";

-- MessagesRepository.addressesOf
select distinct "to", "from", "user_id" as "userId"
from "messages"
where "business_account_id" = $1 and "erased_at" is null and ("to" = any($2) or "from" = any($3) or "user_id" = any($4))
limit $5;

-- MessagesRepository.pageOfContact (no window)
select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt"
from "messages"
where "business_account_id" = $1 and "erased_at" is null and "id" > $2 and ("to" = any($3) or "from" = any($4) or "user_id" = any($5))
order by "id"
limit $6;

-- MessagesRepository.pageOfContact (a window)
select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt"
from "messages"
where "business_account_id" = $1 and "erased_at" is null and "id" > $2 and ("to" = any($3) or "from" = any($4) or "user_id" = any($5)) and "created_at" >= $6 and "created_at" <= $7
order by "id"
limit $8;

-- MessagesRepository.scrubContentBatch
select "id"
from "messages"
where "business_account_id" = any($1) and "created_at" < $2 and "created_at" >= $3 and "content" is not null
limit $4
for update;

update "messages"
set "content" = $1, "content_scrubbed_at" = now()
where "id" = any($2);

-- MessagesRepository.eraseContactBatch
select "id", "upstream_message_id" as "wamid"
from "messages"
where "business_account_id" = $1 and "erased_at" is null and ("to" = any($2) or "from" = any($3) or "user_id" = any($4))
order by "id"
limit $5
for update;

update "messages"
set "content" = $1, "to" = $2, "from" = $3, "user_id" = $4, "upstream_message_id" = $5, "error_detail" = $6, "erased_at" = now()
where "id" = any($7);
