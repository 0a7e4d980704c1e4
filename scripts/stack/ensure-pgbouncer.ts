// `node --import tsx scripts/stack/ensure-pgbouncer.ts`: makes sure a PgBouncer 1.21+ is at hand for the hosted
// topology (built once from Debian's newer source when the system's is older: pgbouncer-build.ts), before a run that
// starts it (./scripts/test.sh before the fault suite, dev.sh --scaled before its engines: either would otherwise build
// it silently, inside a start-up wait). Prints what it found or did; a failure is not an error (the topology falls back
// to Debian's PgBouncer, unnamed statements).
import { pgBouncerVersion, pgBouncerWithPreparedStatements } from './pgbouncer-build.js';

const say = (msg: string) => process.stdout.write(`  ${msg}\n`);
const bin = await pgBouncerWithPreparedStatements(say);
say(
  bin
    ? `PgBouncer ${pgBouncerVersion(bin)} for the scaled topology: ${bin}`
    : 'the scaled topology will use unnamed statements',
);
