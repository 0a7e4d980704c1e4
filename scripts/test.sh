#!/usr/bin/env bash
# Sets up everything (dependencies, the Kysely types' check, real PostgreSQL + Redis, migrations, build), lints (SKIP_LINT=1
# skips that outside CI) and runs every test: the fault suite (full runs only), then unit and end-to-end. Exits
# non-zero when the lint or either suite fails, and ends with the main test run's summary.
# Given DATABASE_URL / REDIS_URL are used as they are; otherwise private ones are started and stopped.
# --slow-host (or SLOW_HOST=1; `npm run test:slow-host`): the slow-host rehearsal. The same run with the CPU taken by
# SLOW_HOST_BUSY_LOOPS busy-loop processes (default: one per core) from set-up to the end, as on a slow, busy CI host;
# run it before resolving an issue (README.md, "Tests on a slow host").
set -euo pipefail
SCRIPT_NAME=test
source "$(dirname "$0")/lib/common.sh"

SLOW_HOST="${SLOW_HOST:-0}"
jest_args=()
for arg in "$@"; do
  if [ "$arg" = "--slow-host" ]; then SLOW_HOST=1; else jest_args+=("$arg"); fi
done
set -- ${jest_args[@]+"${jest_args[@]}"}

# Busy loops for the slow-host rehearsal: children of this script, stopped by its cleanup however it ends.
start_busy_loops() {
  local n="${SLOW_HOST_BUSY_LOOPS:-$(nproc)}" i
  say "slow-host rehearsal: $n busy-loop processes take the CPU until the run ends"
  for ((i = 0; i < n; i++)); do
    node -e 'for (;;) {}' &
    CHILD_PIDS+=("$!")
  done
}

ensure_node
[ "$SLOW_HOST" = "1" ] && start_busy_loops
ensure_dependencies
ensure_db_types
ensure_sql_snapshots
# Lint first (the compiler over every file, ESLint, the layer rules, Prettier, file lengths: npm run lint): a finding stops the run before the long part.
# SKIP_LINT=1 skips it on a developer's machine, never in CI (CI=true).
if [ "${SKIP_LINT:-0}" = "1" ] && [ "${CI:-}" != "true" ]; then
  say "SKIP_LINT=1: not linting (CI always lints)"
else
  say "linting (npm run lint: typecheck, eslint, dependency-cruiser, prettier, file lengths)…"
  npm run --silent lint
fi
start_services
apply_migrations
check_schema_drift
move_ids_above_int32
build
build_web
ensure_chromium
ensure_pgbouncer
ensure_jq

# The fault suite (test/faults, `npm run test:faults`, about 4 minutes on a quiet machine) starts its own PostgreSQL, Redis, API
# and worker processes and breaks them on purpose. Full runs only (no jest arguments; SKIP_FAULTS=1 skips it),
# and before the main suite; the last line printed is one plain "tests: N passed, M failed" over both runs.
fault_code=0
rm -f "$STATE_DIR/jest-faults.json"
# How busy the machine's CPUs were over a span (from /proc/stat): beside each suite's time, it tells whether the span was
# waiting (room for more jest workers) or computing, and on what kind of host it ran.
cpu_ticks() { awk '/^cpu /{ print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8 }' /proc/stat 2>/dev/null || echo "0 0"; }
cpu_busy_since() {
  local b0 t0 b1 t1
  read -r b0 t0 <<<"$1"
  read -r b1 t1 <<<"$(cpu_ticks)"
  [ "$t1" -gt "$t0" ] && echo "$(((b1 - b0) * 100 / (t1 - t0)))% of $(nproc) CPUs busy" || echo "CPU use unknown"
}
if [ "$#" -eq 0 ] && [ "${SKIP_FAULTS:-0}" != "1" ]; then
  # Its scaled spec runs PgBouncer 1.21+ (named statements kept in transaction pooling), built once when missing.
  say "a PgBouncer with prepared statements for the scaled spec (built once from Debian's newer source when the system's is older)…"
  node --import tsx scripts/stack/ensure-pgbouncer.ts
  say "running the fault suite (test/faults: Redis, worker and PostgreSQL failures, duplicate storm)…"
  started=$SECONDS ticks="$(cpu_ticks)"
  set +e
  NODE_OPTIONS='--experimental-vm-modules --no-warnings' node_modules/.bin/jest -c jest.faults.config.js --ci \
    --json --outputFile="$STATE_DIR/jest-faults.json" 2>&1
  fault_code=$?
  set -e
  say "fault suite: $((SECONDS - started)) s, $(cpu_busy_since "$ticks")"
  [ "$fault_code" -eq 0 ] || say "the fault suite FAILED (exit $fault_code); see above. Running the main suite anyway."
fi

say "running the test suite (unit + e2e) against PostgreSQL and Redis…"
export NODE_ENV=test
set +e
rm -f "$STATE_DIR/jest-main.json"
started=$SECONDS ticks="$(cpu_ticks)"
NODE_OPTIONS='--experimental-vm-modules --no-warnings' node_modules/.bin/jest --ci --json --outputFile="$STATE_DIR/jest-main.json" "$@" 2>&1
code=$?
set -e
say "main suite: $((SECONDS - started)) s, $(cpu_busy_since "$ticks")"
if [ "$code" -eq 0 ] && [ "$fault_code" -ne 0 ]; then code="$fault_code"; fi
# One plain closing line over both runs (jest's own summary is just above it).
node -e '
  const fs = require("fs"); let passed = 0, failed = 0;
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) continue;
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests + (r.numRuntimeErrorTestSuites || 0);
  }
  console.log(`tests: ${passed} passed, ${failed} failed`);' "$STATE_DIR/jest-main.json" "$STATE_DIR/jest-faults.json" || true
exit "$code"
