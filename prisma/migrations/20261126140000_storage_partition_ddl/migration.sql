-- The partition DDL of the retention as functions (issue 25: the application's statements are built by Kysely and
-- checked against the schema; DDL takes identifiers, which cannot be parameters, so it lives here, quoted by %I).

-- Detaches a partition of `parent` (events, webhook_deliveries). Waits for the parent's lock only as long as the
-- transaction's lock_timeout allows (the caller sets it).
CREATE FUNCTION "storage_detach_partition"(parent TEXT, part TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF parent NOT IN ('events', 'webhook_deliveries') THEN
    RAISE EXCEPTION 'storage_detach_partition: % is not a partitioned table of the retention', parent;
  END IF;
  EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, part);
END $$;

-- Drops a table named like a partition of `parent` that is no longer attached (the last step of a retention drop).
-- Returns false when there is no such table. Never drops an attached partition or any other table.
CREATE FUNCTION "storage_drop_detached"(parent TEXT, part TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
  IF parent NOT IN ('events', 'webhook_deliveries') OR part !~ ('^' || parent || '_(p[0-9]{8}|history)$') THEN
    RAISE EXCEPTION 'storage_drop_detached: % is not a partition name of %', part, parent;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = current_schema() AND c.relname = part AND c.relkind = 'r' AND NOT c.relispartition) THEN
    RETURN false;
  END IF;
  EXECUTE format('DROP TABLE IF EXISTS %I', part);
  RETURN true;
END $$;

-- Tables named like partitions of `parent` that are no longer attached: a drop whose DROP TABLE did not happen
-- (the process stopped between the detach and the drop).
CREATE FUNCTION "storage_detached_leftovers"(parent TEXT) RETURNS TABLE (name TEXT) LANGUAGE sql STABLE AS $$
  SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT c.relispartition
     AND c.relname ~ ('^' || parent || '_(p[0-9]{8}|history)$')
$$;
