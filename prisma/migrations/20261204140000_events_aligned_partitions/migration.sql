-- Issue 40, item 2: an events row without alignment padding, no rewrite.
--
-- A row's columns are stored in the table's column order, each fixed-width one at its alignment: in the parent's order
-- (the columns as migrations added them) a status row had 16 bytes of padding (6 before `upstream_timestamp`, 4 before
-- `created_at`, 6 before `display_phone`): 224 bytes a tuple, 35 to a page. A partition may order its columns
-- otherwise (PostgreSQL matches a partition's columns by name, and already maps every row between the parent's layout,
-- with its dropped columns, and the partitions'): an events partition is now made with the 8-byte columns first, then
-- the 4-, 2- and 1-byte ones, then the variable-length ones (short ones need no alignment): 208 bytes, 38 to a page.
--
-- Weeks made from now on (storage_ensure_partitions) get the new order; the empty ones made ahead are made again here,
-- so a database gets it from this week or the next. A week with rows keeps its order until the retention drops it: no
-- row is rewritten.

-- A new partition of `parent` named `part`, not attached: for `events` with its columns ordered by alignment, for
-- another table as before (LIKE: the parent's order; the deliveries' compaction copies rows with SELECT *).
CREATE FUNCTION "storage_partition_shell"(parent TEXT, part TEXT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
  cols TEXT;
  c RECORD;
BEGIN
  IF parent <> 'events' THEN
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', part, parent);
    RETURN;
  END IF;
  SELECT string_agg(format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                           CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                           COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')),
                    ', ' ORDER BY a.attlen < 0,
                                  CASE a.attalign WHEN 'd' THEN 0 WHEN 'i' THEN 1 WHEN 's' THEN 2 ELSE 3 END,
                                  a.attnum)
    INTO cols
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped;
  EXECUTE format('CREATE TABLE %I (%s)', part, cols);
  -- What LIKE … INCLUDING CONSTRAINTS and INCLUDING STORAGE would have copied.
  FOR c IN SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
            WHERE conrelid = parent::regclass AND contype = 'c' LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', part, c.conname, c.def);
  END LOOP;
  FOR c IN SELECT a.attname, a.attstorage FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attstorage <> t.typstorage LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STORAGE %s', part, c.attname,
                   CASE c.attstorage WHEN 'p' THEN 'PLAIN' WHEN 'e' THEN 'EXTERNAL' WHEN 'm' THEN 'MAIN' ELSE 'EXTENDED' END);
  END LOOP;
END $$;

-- As in migration storage_bigint_partitions, each new week made by storage_partition_shell.
CREATE OR REPLACE FUNCTION "storage_ensure_partitions"(parent TEXT, from_ts TIMESTAMPTZ, through TIMESTAMPTZ) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  start TIMESTAMPTZ := "storage_period_start"(from_ts);
  made INTEGER := 0;
  part TEXT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('storage_ensure_partitions'), hashtext(parent));
  WHILE start <= through LOOP
    part := parent || '_p' || to_char(start AT TIME ZONE 'UTC', 'YYYYMMDD');
    IF to_regclass(format('%I', part)) IS NULL AND NOT EXISTS (
      -- A partition of another name (the history partition) may already cover this week.
      SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = parent::regclass
         AND pg_get_expr(c.relpartbound, c.oid) LIKE '%MINVALUE%'
         AND "storage_partition_upper"(c.oid) > start) THEN
      PERFORM "storage_partition_shell"(parent, part);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, start, start + INTERVAL '7 days');
      made := made + 1;
    END IF;
    start := start + INTERVAL '7 days';
  END LOOP;
  RETURN made;
END $$;

-- The weeks made ahead that hold no row yet, made again in the new order (events held for the moment it takes:
-- nothing can be written into a week between the check and its replacement).
LOCK TABLE "events" IN ACCESS EXCLUSIVE MODE;
DO $$
DECLARE
  p RECORD;
  empty BOOLEAN;
BEGIN
  FOR p IN SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
             FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'events'::regclass AND c.relname ~ '^events_p[0-9]{8}$' ORDER BY 1 LOOP
    EXECUTE format('SELECT NOT EXISTS (SELECT 1 FROM %I)', p.name) INTO empty;
    CONTINUE WHEN NOT empty;
    EXECUTE format('ALTER TABLE "events" DETACH PARTITION %I', p.name);
    EXECUTE format('DROP TABLE %I', p.name);
    PERFORM "storage_partition_shell"('events', p.name);
    EXECUTE format('ALTER TABLE "events" ATTACH PARTITION %I %s', p.name, p.bound);
  END LOOP;
END $$;
