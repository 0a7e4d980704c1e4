-- The statements of src/accounts/business-accounts/business-accounts.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- business_account_send_state
select "credentials_valid" as "credentialsValid", "credentials_error" as "credentialsError", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "marketing_messages_status" as "marketingMessagesStatus"
from "business_accounts"
where "id" = $1;

-- business_accounts_lock_standings
select "id", "waba_id" as "wabaId", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "updatedAt", "standing_times" as "times"
from "business_accounts"
where "waba_id" = any($1)
order by "id"
for update;

-- business_accounts_write_standings
update "business_accounts" as "b"
set "ban_state" = "v"."banState", "ban_date" = "v"."banDate", "restrictions" = "v"."restrictions", "violation_type" = "v"."violationType", "pricing_tiers" = "v"."pricingTiers", "alerts" = "v"."alerts", "standing_updated_at" = "v"."updatedAt", "standing_times" = "v"."times", "updated_at" = now()
from jsonb_to_recordset($1::jsonb) as "v"("id" uuid, "banState" text, "banDate" text, "restrictions" jsonb, "violationType" text, "pricingTiers" jsonb, "alerts" jsonb, "updatedAt" timestamptz, "times" jsonb)
where "b"."id" = "v"."id";

-- business_accounts_marketing_onboarded
update "business_accounts" as "b"
set "marketing_messages_status" = $1, "marketing_messages_updated_at" = "v"."at", "updated_at" = now()
from unnest($2::text[], $3::timestamptz[]) as "v"("waba", "at")
where "b"."waba_id" = "v"."waba" and ("b"."marketing_messages_updated_at" is null or "b"."marketing_messages_updated_at" <= "v"."at");

-- BusinessAccountsRepository.getOwned
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt"
from "business_accounts"
where "organization_id" = $1 and "waba_id" = $2;
-- (stops here on the empty answer: NotFound)

-- BusinessAccountsRepository.getConnected
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt"
from "business_accounts"
where "organization_id" = $1 and "waba_id" = $2;
-- (stops here on the empty answer: NotFound)

-- BusinessAccountsRepository.page
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt"
from "business_accounts"
where "organization_id" = $1
order by "created_at", "id"
limit $2
offset $3;

select count(*) as "n"
from "business_accounts"
where "organization_id" = $1;
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.list
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt"
from "business_accounts"
where "organization_id" = $1
order by "created_at";

-- BusinessAccountsRepository.findAnyByWabaId
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt"
from "business_accounts"
where "waba_id" = $1;

-- BusinessAccountsRepository.findCredential
select "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted", "disconnected_at" as "disconnectedAt"
from "business_accounts"
where "id" = $1;

-- BusinessAccountsRepository.credentialsAfter (first page)
select "id", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
order by "id"
limit $1;

-- BusinessAccountsRepository.credentialsAfter (after an id)
select "id", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
where "id" > $1
order by "id"
limit $2;

-- BusinessAccountsRepository.legacyCredentialsAfter (first page)
select "id", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
where "access_token_encrypted" like $1
order by "id"
limit $2;

-- BusinessAccountsRepository.legacyCredentialsAfter (after an id)
select "id", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
where "id" > $1 and "access_token_encrypted" like $2
order by "id"
limit $3;

-- BusinessAccountsRepository.countAll
select count(*) as "n"
from "business_accounts";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.replaceCredentialIf
update "business_accounts"
set "access_token_encrypted" = $1, "updated_at" = now()
where "id" = $2 and "access_token_encrypted" = $3;

-- BusinessAccountsRepository.create
insert into "business_accounts" ("id", "organization_id", "waba_id", "name", "access_token_encrypted", "webhooks_subscribed", "webhooks_checked_at", "credentials_valid", "credentials_error", "credentials_checked_at", "readable_until", "marketing_messages_status", "marketing_messages_updated_at", "updated_at")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now())
on conflict ("waba_id") do nothing
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- BusinessAccountsRepository.reconnect (name kept)
update "business_accounts"
set "access_token_encrypted" = $1, "webhooks_subscribed" = $2, "webhooks_checked_at" = $3, "credentials_valid" = $4, "credentials_error" = $5, "credentials_checked_at" = $6, "readable_until" = $7, "marketing_messages_status" = $8, "marketing_messages_updated_at" = $9, "disconnected_at" = $10, "updated_at" = now()
where "id" = $11 and "organization_id" = $12
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.reconnect (renamed)
update "business_accounts"
set "access_token_encrypted" = $1, "webhooks_subscribed" = $2, "webhooks_checked_at" = $3, "credentials_valid" = $4, "credentials_error" = $5, "credentials_checked_at" = $6, "readable_until" = $7, "marketing_messages_status" = $8, "marketing_messages_updated_at" = $9, "name" = $10, "disconnected_at" = $11, "updated_at" = now()
where "id" = $12 and "organization_id" = $13
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.markWebhooksSubscribed
update "business_accounts"
set "webhooks_subscribed" = $1, "webhooks_checked_at" = $2, "updated_at" = now()
where "id" = $3 and "organization_id" = $4
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.recordCredentialCheck (valid)
update "business_accounts"
set "credentials_valid" = $1, "credentials_error" = $2, "credentials_checked_at" = $3, "marketing_messages_status" = $4, "marketing_messages_updated_at" = $5, "readable_until" = $6, "updated_at" = now()
where "id" = $7 and "organization_id" = $8 and "access_token_encrypted" = $9
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- BusinessAccountsRepository.recordCredentialCheck (rejected)
update "business_accounts"
set "credentials_valid" = $1, "credentials_error" = $2, "credentials_checked_at" = $3, "readable_until" = coalesce("readable_until", $4), "updated_at" = now()
where "id" = $5 and "organization_id" = $6 and "access_token_encrypted" = $7
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- BusinessAccountsRepository.credentialChecksDue (first page)
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
where "disconnected_at" is null and ("credentials_checked_at" is null or "credentials_checked_at" < $1)
order by "id"
limit $2;

-- BusinessAccountsRepository.credentialChecksDue (after an id)
select "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "access_token_encrypted" as "accessTokenEncrypted"
from "business_accounts"
where "disconnected_at" is null and ("credentials_checked_at" is null or "credentials_checked_at" < $1) and "id" > $2
order by "id"
limit $3;

-- BusinessAccountsRepository.disconnect
update "business_accounts"
set "disconnected_at" = $1, "readable_until" = coalesce("readable_until", $2), "updated_at" = now()
where "id" = $3 and "organization_id" = $4
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.takeOver
update "business_accounts"
set "organization_id" = $1, "access_token_encrypted" = $2, "webhooks_subscribed" = $3, "webhooks_checked_at" = $4, "credentials_valid" = $5, "credentials_error" = $6, "credentials_checked_at" = $7, "readable_until" = $8, "marketing_messages_status" = $9, "marketing_messages_updated_at" = $10, "name" = $11, "disconnected_at" = $12, "held_since" = $13, "updated_at" = now()
where "id" = $14 and "organization_id" = $15 and "access_token_encrypted" = $16 and ("disconnected_at" is not null or "credentials_valid" = $17)
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";

-- BusinessAccountsRepository.markSynced (phone numbers)
update "business_accounts"
set "phone_numbers_synced_at" = $1, "updated_at" = now()
where "id" = $2 and "organization_id" = $3
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)

-- BusinessAccountsRepository.markSynced (templates)
update "business_accounts"
set "templates_synced_at" = $1, "updated_at" = now()
where "id" = $2 and "organization_id" = $3
returning "id", "organization_id" as "organizationId", "waba_id" as "wabaId", "name", "access_token_encrypted" as "accessTokenEncrypted", "phone_numbers_synced_at" as "phoneNumbersSyncedAt", "templates_synced_at" as "templatesSyncedAt", "disconnected_at" as "disconnectedAt", "webhooks_subscribed" as "webhooksSubscribed", "webhooks_checked_at" as "webhooksCheckedAt", "credentials_valid" as "credentialsValid", "credentials_checked_at" as "credentialsCheckedAt", "credentials_error" as "credentialsError", "held_since" as "heldSince", "readable_until" as "readableUntil", "ban_state" as "banState", "ban_date" as "banDate", "restrictions", "violation_type" as "violationType", "pricing_tiers" as "pricingTiers", "alerts", "standing_updated_at" as "standingUpdatedAt", "standing_times" as "standingTimes", "marketing_messages_status" as "marketingMessagesStatus", "marketing_messages_updated_at" as "marketingMessagesUpdatedAt", "created_at" as "createdAt", "updated_at" as "updatedAt";
-- (stops here on the empty answer: NoResultError)
