-- The statements of src/core/db/partitions.ts, as PostgreSQL receives them ($n: the run's values).
-- Written by `npm run db:sql` (scripts/sql-snapshots.ts): do not edit; CI fails when it is stale.

-- storage_ensure_partitions
select storage_ensure_partitions($1, $2, $3) as "made";

-- storage_partitions
select "p"."name", "p"."lower_bound" as "lowerBound", "p"."upper_bound" as "upperBound"
from storage_partitions($1) as "p";

-- storage_lock_timeout
select set_config($1, $2, true) as "timeout";

-- storage_detach_partition
select storage_detach_partition($1, $2) as "detached";

-- storage_drop_detached
select storage_drop_detached($1, $2) as "dropped";

-- storage_detached_leftovers
select "l"."name"
from storage_detached_leftovers($1) as "l";

-- storage_compaction_claim
select storage_compaction_claim($1, $2, $3::interval) as "partition";

-- storage_compaction_release
select storage_compaction_release($1) as "released";

-- storage_invalid_indexes
select "i"."name"
from storage_invalid_indexes($1) as "i";

-- storage_partition_bytes
select cast(pg_total_relation_size($1::regclass) as text) as "bytes";

-- storage_rewrite_partition
select cast(storage_rewrite_partition($1, $2) as text) as "rows";

-- storage_compaction_finish
select cast(storage_compaction_finish($1, cast($2 as bigint)) as text) as "after";
