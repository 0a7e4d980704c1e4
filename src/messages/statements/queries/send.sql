-- The statements of src/messages/statements/send.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- insert_pending_messages
insert into "messages" ("business_account_id", "api_key_id", "phone_number_id", "to", "type", "template_name", "template_language", "content", "user_id", "upstream_api", "status", "updated_at")
select "u"."b", "u"."k", "u"."p", "u"."t", "u"."ty", "u"."tn", "u"."tl", "u"."c", "u"."ui", "u"."ua", $1 as "status", now() as "updatedAt"
from unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[], $10::text[], $11::text[])
WITH ORDINALITY as "u"("b", "k", "p", "t", "ty", "tn", "tl", "c", "ui", "ua", "ord")
order by "u"."ord"
returning "id", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- mark_messages_sent
update "messages" as "m"
set "status" = $1, "upstream_message_id" = "u"."wamid", "accepted_at" = "u"."at", "sent_at" = "u"."at", "updated_at" = "u"."at"
from unnest($2::bigint[], $3::uuid[], $4::text[], $5::timestamptz[]) as "u"("id", "b", "wamid", "at")
where ("m"."id" = any(array((
        select "l"."id"
        from "messages" as "l"
        where "l"."id" = any($6::bigint[])
        order by "l"."id"
        for update))) and "m"."id" = "u"."id" and ("m"."status" = $7 and "m"."business_account_id" = "u"."b") is true)
returning "m"."id";

-- record_late_acceptance
update "messages"
set "upstream_message_id" = coalesce("upstream_message_id", $1::text), "accepted_at" = coalesce("accepted_at", $2::timestamptz), "updated_at" = now()
where ("id" = $3 and ("business_account_id" = $4::uuid) is true)
returning "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt";

-- mark_message_failed
with "failed" as (
  update "messages"
  set "status" = $1, "failed_at" = $2, "error_code" = $3, "error_title" = $4, "error_detail" = $5, "error_category" = $6, "updated_at" = $7
  where ("id" = $8 and "status" = $9 and ("business_account_id" = $10::uuid) is true)
  returning "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt")
select *
from "failed"
union all
select "id", "business_account_id" as "businessAccountId", "api_key_id" as "apiKeyId", "phone_number_id" as "phoneNumberId", "to", "user_id" as "userId", "upstream_api" as "upstreamApi", "direction", "from", "handled_by" as "handledBy", "type", "template_name" as "templateName", "template_language" as "templateLanguage", "content", "status", "upstream_message_id" as "upstreamMessageId", "error_code" as "errorCode", "error_title" as "errorTitle", "error_detail" as "errorDetail", "error_category" as "errorCategory", "accepted_at" as "acceptedAt", "sent_at" as "sentAt", "delivered_at" as "deliveredAt", "read_at" as "readAt", "failed_at" as "failedAt", "pricing_model" as "pricingModel", "pricing_category" as "pricingCategory", "pricing_type" as "pricingType", "pricing_billable" as "pricingBillable", "campaign_id" as "campaignId", "created_at" as "createdAt", "updated_at" as "updatedAt", "erased_at" as "erasedAt", "content_scrubbed_at" as "contentScrubbedAt"
from "messages"
where ("id" = $11 and ("business_account_id" = $12::uuid) is true and not exists (
    select 1 as "one"
    from "failed"));

-- insert_pending_message_claiming_key
with "claim" as (
  insert into "idempotency_keys" ("api_key_id", "key", "request_hash", "state", "locked_until", "created_at", "expires_at")
  values ($1::uuid, $2, $3, $4, $5, $6, $7)
  on conflict ("api_key_id", "key")
  do update set "request_hash" = "excluded"."request_hash", "state" = $8, "response_body" = $9, "locked_until" = "excluded"."locked_until", "created_at" = case when "idempotency_keys"."expires_at" <= $10 then "excluded"."created_at" else "idempotency_keys"."created_at" end, "expires_at" = case when "idempotency_keys"."expires_at" <= $11 then "excluded"."expires_at" else "idempotency_keys"."expires_at" end
  where ("idempotency_keys"."expires_at" <= $12 or ("idempotency_keys"."state" = $13 and "idempotency_keys"."locked_until" <= $14 and "idempotency_keys"."request_hash" = "excluded"."request_hash"))
  returning 1 as "claimed")
insert into "messages" ("business_account_id", "api_key_id", "phone_number_id", "to", "type", "template_name", "template_language", "content", "user_id", "upstream_api", "status", "updated_at")
select $15::uuid as "b", $16::uuid as "k", $17::text as "p", $18::text as "t", $19::text as "ty", $20::text as "tn", $21::text as "tl", $22::jsonb as "c", $23::text as "ui", $24::text as "ua", $25 as "status", now() as "updatedAt"
from "claim"
returning "id", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- mark_message_sent_completing_key
with "sent" as (
  update "messages"
  set "status" = $1, "upstream_message_id" = $2, "accepted_at" = $3, "sent_at" = $4, "updated_at" = $5
  where ("id" = $6 and "status" = $7 and ("business_account_id" = $8::uuid) is true)
  returning "id"), "completed" as (
  update "idempotency_keys"
  set "state" = $9, "response_body" = $10
  where "api_key_id" = $11::uuid and "key" = $12 and (
    select exists (
      select "sent"."id"
      from "sent") as "moved"))
select cast(count(*) as integer) as "sent"
from "sent";
