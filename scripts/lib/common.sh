# Shared set-up for scripts/dev.sh and scripts/test.sh. Sourced, not run.
# Every variable already set in the environment wins over .env, generated values and defaults.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE_DIR="${STATE_DIR:-$ROOT/.local/${SCRIPT_NAME:-dev}}"
cd "$ROOT"
mkdir -p "$STATE_DIR"

# Each line carries the seconds since the script started (bash's SECONDS): where a long set-up or run spends its time.
say() { printf '\033[1m[%s +%ss]\033[0m %s\n' "${SCRIPT_NAME:-setup}" "$SECONDS" "$*"; }
die() { printf '\033[31m[%s +%ss] %s\033[0m\n' "${SCRIPT_NAME:-setup}" "$SECONDS" "$*" >&2; exit 1; }

CHILD_PIDS=()
SERVICES_PID=""

# Stop everything this script started, children first, the services supervisor last.
cleanup() {
  local code=$?
  trap - EXIT INT TERM HUP
  for pid in "${CHILD_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${CHILD_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$SERVICES_PID" ]; then
    kill -TERM "$SERVICES_PID" 2>/dev/null || true
    wait "$SERVICES_PID" 2>/dev/null || true
  fi
  release_ports
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Load KEY=VALUE lines from a file, but never over a variable that is already set (empty counts as unset).
load_env_file() {
  local file="$1" line key value
  [ -f "$file" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in ''|'#'*) continue ;; esac
    key="${line%%=*}"
    value="${line#*=}"
    [[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
    if [ -z "${!key:-}" ]; then export "$key=$value"; fi
  done < "$file"
}

ensure_node() {
  command -v node >/dev/null || die "Node.js 20+ is required (https://nodejs.org or: apt-get install -y nodejs npm)"
  local major; major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 20 ] || die "Node.js 20+ is required (found $(node -v))"
}

# npm install when node_modules is missing or older than the lockfile / package.json.
ensure_dependencies() {
  local marker="node_modules/.package-lock.json"
  if [ ! -f "$marker" ] || [ package.json -nt "$marker" ] || { [ -f package-lock.json ] && [ package-lock.json -nt "$marker" ]; }; then
    say "installing dependencies (npm install)…"
    npm install --no-audit --no-fund --loglevel=error
  fi
}

# The Kysely types of the database (src/core/db/database.ts, committed, generated from prisma/schema.prisma by
# scripts/db-types.ts): the dev script rewrites them; the test script (CI) fails when they do not match the schema.
ensure_db_types() {
  if [ "${SCRIPT_NAME:-}" = test ]; then
    node_modules/.bin/tsx scripts/db-types.ts --check || die "src/core/db/database.ts is out of date: npm run db:generate, then commit it"
  else
    node_modules/.bin/tsx scripts/db-types.ts
  fi
}

# The SQL snapshots (src/**/queries/*.sql: every prepared statement and every @GenerateSql sample of a repository
# method as PostgreSQL receives it, written by scripts/sql-snapshots.ts, `npm run db:sql`): the dev script rewrites
# them; the test script (CI) fails when one is stale, or when a method that builds SQL per call has no @GenerateSql.
ensure_sql_snapshots() {
  if [ "${SCRIPT_NAME:-}" = test ]; then
    node_modules/.bin/tsx scripts/sql-snapshots.ts --check || die "the SQL snapshots are out of date (or a method has no @GenerateSql): npm run db:sql, then commit src/**/queries/*.sql"
  else
    node_modules/.bin/tsx scripts/sql-snapshots.ts
  fi
}

# Real PostgreSQL and Redis: the given DATABASE_URL / REDIS_URL (or REDIS_CLUSTER_NODES), or private ones started for
# this run by the stack module's CLI (scripts/stack/cli.ts, run through tsx; stops with this script, even after a
# kill -9). A given REDIS_CLUSTER_NODES gets no generated REDIS_URL: the service would refuse the two together.
# With --scaled (dev.sh --scaled): a primary with a streaming replica, PgBouncer and a Redis Cluster (scripts/stack/scaled.ts).
start_services() {
  if [ -n "${DATABASE_URL:-}" ] && { [ -n "${REDIS_URL:-}" ] || [ -n "${REDIS_CLUSTER_NODES:-}" ]; }; then
    if [ -n "${REDIS_CLUSTER_NODES:-}" ]; then say "using the given DATABASE_URL and REDIS_CLUSTER_NODES"
    else say "using the given DATABASE_URL and REDIS_URL"; fi
    return 0
  fi
  local log="$STATE_DIR/services.log" env_file="$STATE_DIR/services.env"
  rm -f "$env_file"
  if [ "${1:-}" = --scaled ]; then
    say "starting local services: PostgreSQL primary + streaming replica, PgBouncer, Redis Cluster (3 masters + 3 replicas)…"
  else
    say "starting local services (PostgreSQL and/or Redis)…"
  fi
  node --import tsx scripts/stack/cli.ts --state-dir "$STATE_DIR" --parent-pid $$ "$@" >"$log" 2>&1 &
  SERVICES_PID=$!
  local waited=0
  until [ -f "$env_file" ]; do
    if ! kill -0 "$SERVICES_PID" 2>/dev/null; then
      wait "$SERVICES_PID"; local code=$?
      SERVICES_PID=""
      cat "$log" >&2
      die "local services failed to start (exit $code); see above"
    fi
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 900 ] || { cat "$log" >&2; die "local services not ready after 180 s"; }
  done
  grep '^\[services\].*ready' "$log" | sed 's/^/  /' || true
  load_env_file "$env_file"
}

# Migrations, the drift check and the id moves are session work: on DATABASE_DIRECT_URL when DATABASE_URL is a pooler.
apply_migrations() {
  say "applying database migrations…"
  DATABASE_URL="${DATABASE_DIRECT_URL:-$DATABASE_URL}" node_modules/.bin/tsx prisma/migrate.ts deploy | sed 's/^/  /'
}

# The test tier only (scripts/test.sh, after the migrations): schema.prisma and prisma/migrations must describe the same
# schema (`tsx prisma/migrate.ts diff`: the migrations replayed on a shadow database against schema.prisma). A drift
# fails the run with the SQL that would close it, instead of being folded into someone else's next migration.
check_schema_drift() {
  say "checking that prisma/schema.prisma and prisma/migrations agree (tsx prisma/migrate.ts diff)…"
  local out code=0
  out="$(DATABASE_URL="${DATABASE_DIRECT_URL:-$DATABASE_URL}" node_modules/.bin/tsx prisma/migrate.ts diff 2>&1)" || code=$?
  if [ "$code" -ne 0 ]; then
    printf '%s\n' "$out" | sed 's/^/  /' >&2
    die "schema.prisma and the migrations differ (exit $code): add a migration (npm run db:migrate -- <name>) or fix the schema"
  fi
}

# The test tier only (scripts/test.sh, after the migrations): every id sequence past 2^31, each table at its own
# billion (scripts/lib/ids-above-int32.sql), so that any 32-bit assumption left fails a test loudly.
move_ids_above_int32() {
  say "moving every id sequence past 2^31 (scripts/lib/ids-above-int32.sql)…"
  node -e '
    const fs = require("fs"), pg = require("pg");
    const client = new pg.Client({ connectionString: process.env.DATABASE_DIRECT_URL || process.env.DATABASE_URL });
    const moved = [];
    client.on("notice", (n) => moved.push(n.message));
    (async () => {
      await client.connect();
      await client.query(fs.readFileSync(process.argv[1], "utf8"));
      console.log("  " + moved.join(", "));
      await client.end();
    })().catch((e) => { console.error(e.message); process.exit(1); });' scripts/lib/ids-above-int32.sql
}

build() {
  say "compiling TypeScript…"
  node_modules/.bin/tsc -p tsconfig.build.json
}

# The web console (src/web) built into dist/web, which the API serves under /console. Skipped while the
# build is newer than every file it is made from.
build_web() {
  local built="dist/web/index.html"
  if [ -f "$built" ] && [ -z "$(find src/web vite.config.ts package-lock.json -newer "$built" -print -quit)" ]; then
    return 0
  fi
  say "building the web console (npm run build:web → dist/web)…"
  npm run --silent build:web
}

# The README's walk-through (test/e2e/first-hour.e2e-spec.ts runs it as printed) reads answers with jq.
ensure_jq() {
  command -v jq >/dev/null && return 0
  [ "$(id -u)" -eq 0 ] || die "the README walk-through test needs jq; install it with: sudo apt-get install -y jq"
  say "installing jq for the README walk-through test (one-time)"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq jq \
    || { apt-get -o DPkg::Lock::Timeout=120 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq jq; }
  command -v jq >/dev/null || die "apt-get install jq did not provide jq"
}

# test/e2e/pooler.e2e-spec.ts runs the service behind Debian's PgBouncer in transaction pooling.
ensure_pgbouncer() {
  [ -x /usr/sbin/pgbouncer ] && return 0
  [ "$(id -u)" -eq 0 ] || die "the pooler test needs PgBouncer at /usr/sbin/pgbouncer; install it with: sudo apt-get install -y pgbouncer"
  local apt=(apt-get -o DPkg::Lock::Timeout=120)
  say "installing PgBouncer for the pooler test: ${apt[*]} install -y pgbouncer (one-time)"
  if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq pgbouncer; then
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq pgbouncer
  fi
  [ -x /usr/sbin/pgbouncer ] || die "apt-get install pgbouncer did not provide /usr/sbin/pgbouncer"
  # Debian's package starts its own service on port 6432; the test runs its own instance.
  service pgbouncer stop >/dev/null 2>&1 || true
}

# The browser tests drive Debian's Chromium (Playwright cannot download browsers on these machines).
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  [ "$(id -u)" -eq 0 ] || die "the browser tests need Chromium at /usr/bin/chromium; install it with: sudo apt-get install -y chromium"
  local apt=(apt-get -o DPkg::Lock::Timeout=120)
  say "installing Chromium for the browser tests: ${apt[*]} install -y chromium (one-time)"
  if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq chromium; then
    say "retrying after ${apt[*]} update"
    "${apt[@]}" update -qq
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y -qq chromium
  fi
  [ -x /usr/bin/chromium ] || die "apt-get install chromium did not provide /usr/bin/chromium"
}

# Ports dev.sh picks are claimed until it exits (one directory per port under PORT_CLAIMS, holding the claimer's pid),
# so two clones started together never both pick a port that neither process has bound yet (the builds take a
# minute between the pick and the bind). A claim whose process is gone is stale and taken over.
PORT_CLAIMS="${TMPDIR:-/tmp}/bmapi-dev-port-claims"

# A free port nobody else claimed: $1 when it is, else any; claimed for this script.
claim_port() {
  local port owner tries=0
  mkdir -p "$PORT_CLAIMS"
  port="$(free_port "${1:-0}")"
  until mkdir "$PORT_CLAIMS/$port" 2>/dev/null; do
    owner="$(cat "$PORT_CLAIMS/$port/pid" 2>/dev/null || true)"
    if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then rm -rf "$PORT_CLAIMS/$port"; continue; fi
    tries=$((tries + 1))
    [ "$tries" -lt 100 ] || die "could not claim a free port under $PORT_CLAIMS"
    port="$(free_port 0)"
  done
  echo $$ > "$PORT_CLAIMS/$port/pid"
  echo "$port"
}

# This script's claims (cleanup calls it).
release_ports() {
  local claim
  for claim in "$PORT_CLAIMS"/*/; do
    [ "$(cat "$claim/pid" 2>/dev/null)" = "$$" ] && rm -rf "$claim"
  done
  return 0
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(Number(process.argv[1])||0,"127.0.0.1",()=>{console.log(s.address().port);s.close()}).on("error",()=>{const t=require("net").createServer();t.listen(0,"127.0.0.1",()=>{console.log(t.address().port);t.close()})})' "${1:-0}"
}
