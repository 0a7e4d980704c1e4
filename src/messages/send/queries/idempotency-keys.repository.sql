-- The statements of src/messages/send/idempotency-keys.repository.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- idempotency_key
select "api_key_id" as "apiKeyId", "key", "request_hash" as "requestHash", "state", "response_body" as "responseBody", "locked_until" as "lockedUntil", "created_at" as "createdAt", "expires_at" as "expiresAt"
from "idempotency_keys"
where "api_key_id" = $1 and "key" = $2;

-- complete_idempotency_key
update "idempotency_keys"
set "state" = $1, "response_body" = $2
where "api_key_id" = $3::uuid and "key" = $4;

-- release_idempotency_key
delete from "idempotency_keys"
where "api_key_id" = $1 and "key" = $2 and "state" = $3;

-- delete_expired_idempotency_keys
delete from "idempotency_keys"
where ("api_key_id", "key") in (
  select "api_key_id", "key"
  from "idempotency_keys"
  where "expires_at" <= $1
  order by "expires_at"
  limit $2);

-- IdempotencyKeysRepository.eraseContact
delete from "idempotency_keys"
where "api_key_id" in (
  select "id"
  from "api_keys"
  where "business_account_id" = $1) and strpos(cast("response_body" as text), $2) > $3;
