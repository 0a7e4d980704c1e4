-- The statements of src/messages/statements/reads.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- find_message
select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt"
from "messages"
where ("id" = $1 and ("business_account_id" = $2::uuid) is true);

-- messages_page_<shape> (the shape with no optional parameter given)
select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt"
from "messages"
where "business_account_id" = $1::uuid
order by "created_at" desc, "id" desc
limit $2
offset $3;

-- messages_count_<shape> (the shape with no optional parameter given)
select cast(count(*) as text) as "n"
from (
  select "id"
  from "messages"
  where "business_account_id" = $1::uuid
  limit $2) as "counted";

-- messages_feed_<shape> (the shape with no optional parameter given)
with "h" as materialized (
  select "x"."horizon", (
    select "b"."changed_xid"
    from "messages" as "b"
    where "b"."business_account_id" = $1::uuid and "b"."changed_xid" >= "x"."horizon"
    order by "b"."changed_xid"
    limit $2) as "beyond"
  from pg_snapshot_xmin(pg_current_snapshot()) as "x"(horizon))
select cast("h"."horizon" as text) as "horizon", cast("h"."beyond" as text) as "beyond", "r".*
from "h"
left join lateral (
  select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt", "changed_xid" as "xid"
  from "messages"
  where "business_account_id" = $3::uuid and ("changed_xid", "id") > ($4::xid8, $5::bigint) and "changed_xid" < "h"."horizon"
  order by "changed_xid", "id"
  limit $6) as "r" on true
order by "r"."xid", "r"."id";
