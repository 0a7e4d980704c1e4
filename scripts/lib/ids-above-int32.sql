-- The test tier's ids: every sequence of the schema moved past 2^31 (./scripts/test.sh and the fault suite run it
-- after the migrations; never a development or production database). Any 32-bit assumption left (an int column,
-- an ::int cast, a 10-digit pattern, a `| 0`) then fails a test instead of a service that has run for a while:
-- setval itself refuses a sequence that is still `AS integer`. Each sequence starts at its own place, 3e9 × 10^(i mod 5)
-- + i × 1e9 in name order (3e9, 3.1e10, 3.02e11, 3.003e12, …: 10 to 13 digits, some past 2^32, all far below 2^53), so ids
-- of different tables never coincide, an id used for the wrong table finds nothing, and a pattern or column that
-- holds 10 digits fails too. A sequence already past its start (a re-run on the same database) stays.
DO $$
DECLARE
  seq RECORD;
  i INTEGER := 0;
  start BIGINT;
BEGIN
  FOR seq IN
    SELECT s.schemaname, s.sequencename, s.last_value FROM pg_sequences s
     WHERE s.schemaname = current_schema() ORDER BY s.sequencename
  LOOP
    start := 3000000000::bigint * (10::bigint ^ (i % 5))::bigint + i * 1000000000::bigint;
    IF coalesce(seq.last_value, 0) < start THEN
      PERFORM setval(format('%I.%I', seq.schemaname, seq.sequencename), start, false);
      RAISE NOTICE '% from %', seq.sequencename, start;
    ELSE
      RAISE NOTICE '% already at %', seq.sequencename, seq.last_value;
    END IF;
    i := i + 1;
  END LOOP;
END $$;
