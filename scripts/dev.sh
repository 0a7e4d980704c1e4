#!/usr/bin/env bash
# One command to a running local service: installs what is missing, starts real PostgreSQL and Redis when
# DATABASE_URL / REDIS_URL (or REDIS_CLUSTER_NODES) are not given, the WhatsApp Cloud API simulator when
# UPSTREAM_BASE_URL is not given, applies migrations, seeds demo data, then runs the API and the worker until Ctrl-C.
# Every variable already set in the environment wins over .env and over the defaults here.
#   --watch (npm run start:dev): the TypeScript compiler keeps compiling src/ on every change and the API and
#   the worker restart on every new build (tsc -w + node --watch).
#   --scaled: the topology of a hosted deployment on this machine (docs/operations-and-scaling.md): a PostgreSQL
#   primary with a streaming replica, PgBouncer in transaction pooling before the primary, a Redis Cluster of 3
#   masters and 3 replicas, two API processes (PORT and PORT+1) and two workers. Its data lives in .local/dev-scaled.
set -euo pipefail
WATCH=0
SCALED=0
for arg in "$@"; do
  case "$arg" in
    --watch) WATCH=1 ;;
    --scaled) SCALED=1 ;;
    *) printf 'unknown argument: %s (usage: ./scripts/dev.sh [--watch] [--scaled])\n' "$arg" >&2; exit 64 ;;
  esac
done
SCRIPT_NAME=dev
[ "$SCALED" = 1 ] && STATE_DIR="${STATE_DIR:-$(cd "$(dirname "$0")/.." && pwd)/.local/dev-scaled}"
source "$(dirname "$0")/lib/common.sh"

ensure_node
ensure_dependencies
# The service runs on Kysely: only the Kysely types are checked here (Prisma's client is the tests', test.sh).
ensure_db_types
ensure_sql_snapshots

# .env: made once from .env.example with fresh secrets; never overrides the environment.
if [ ! -f .env ]; then
  say "creating .env from .env.example (fresh local secrets)"
  node -e '
    const fs = require("fs"), c = require("crypto");
    let text = fs.readFileSync(".env.example", "utf8");
    text = text.replace(/^ENCRYPTION_KEY=.*$/m, "ENCRYPTION_KEY=" + c.randomBytes(32).toString("hex"))
      .replace(/^WHATSAPP_APP_SECRET=.*$/m, "WHATSAPP_APP_SECRET=" + c.randomBytes(16).toString("hex"))
      .replace(/^WHATSAPP_VERIFY_TOKEN=.*$/m, "WHATSAPP_VERIFY_TOKEN=" + c.randomBytes(16).toString("hex"));
    fs.writeFileSync(".env", text, { mode: 0o600 });'
fi
# Ports: a value set in the environment always wins, as it is. Otherwise .env's value (or the default) when it is
# free, else any free port: a second clone started beside the first comes up on ports of its own.
declare -A GIVEN_PORTS=()
for name in PORT WORKER_METRICS_PORT SIMULATOR_PORT; do GIVEN_PORTS[$name]="${!name:-}"; done
load_env_file .env
pick_port() { # <variable> <default>
  local name="$1" given="${GIVEN_PORTS[$1]}" wanted chosen
  wanted="${!name:-$2}"
  if [ -n "$given" ]; then chosen="$given"
  elif [ "$wanted" -le 0 ] 2>/dev/null; then chosen="$wanted" # 0 = any free port, -1 = none (the worker's metrics)
  else
    chosen="$(claim_port "$wanted")"
    [ "$chosen" = "$wanted" ] || say "$name $wanted is taken (another clone?); using $chosen"
  fi
  [ -n "$chosen" ] || die "could not pick a port for $name"
  export "$name=$chosen"
}
pick_port PORT 3000
pick_port WORKER_METRICS_PORT 9464
# --scaled: the second API and the second worker on the next ports (taken ones are an error: they are printed as
# PORT+1 and WORKER_METRICS_PORT+1 in the banner).
API_PORTS=("$PORT")
WORKER_PORTS=("$WORKER_METRICS_PORT")
if [ "$SCALED" = 1 ]; then
  second="$(claim_port $((PORT + 1)))"
  [ "$second" = $((PORT + 1)) ] || die "--scaled runs the second API on PORT+1 = $((PORT + 1)), which is taken; set PORT to another value"
  API_PORTS+=("$second")
  if [ "$WORKER_METRICS_PORT" -gt 0 ] 2>/dev/null; then
    second="$(claim_port $((WORKER_METRICS_PORT + 1)))"
    [ "$second" = $((WORKER_METRICS_PORT + 1)) ] || die "--scaled runs the second worker's metrics on WORKER_METRICS_PORT+1 = $((WORKER_METRICS_PORT + 1)), which is taken"
    WORKER_PORTS+=("$second")
  else
    WORKER_PORTS+=("$WORKER_METRICS_PORT")
  fi
fi
# Inbound media links (GET /messages/:id → media.url) point at this API unless told otherwise.
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://127.0.0.1:$PORT}"
if [ "$SCALED" = 1 ]; then
  # Before the engines start, in view: a first run on a machine builds PgBouncer 1.21+ once (~40 s, more with apt).
  [ -n "${DATABASE_URL:-}" ] || node --import tsx scripts/stack/ensure-pgbouncer.ts
  start_services --scaled
else
  start_services
fi
apply_migrations
# The web console is built beside the TypeScript build, so the API starts with it ready (no 503, no warning).
# (Stopped with the rest if the TypeScript build fails meanwhile.)
build_web & WEB_BUILD_PID=$!
CHILD_PIDS=("$WEB_BUILD_PID")
build
wait "$WEB_BUILD_PID" || die "building the web console failed; see above"
CHILD_PIDS=()

pretty() { node_modules/.bin/pino-pretty --colorize --singleLine --translateTime 'HH:MM:ss.l' --ignore 'pid,hostname,service' | sed -u "s/^/[$1] /"; }

# The node processes below exit by themselves when this script is gone (even after a kill -9; see
# scripts/stack/parent-guard.mjs), as PostgreSQL and Redis do (start_services).
export PARENT_GUARD_PID=$$

# The simulator stands in for Meta unless UPSTREAM_BASE_URL points somewhere real.
SEED_ARGS=()
if [ -z "${UPSTREAM_BASE_URL:-}" ]; then
  pick_port SIMULATOR_PORT 4010
  say "starting the WhatsApp Cloud API simulator on port $SIMULATOR_PORT…"
  # Several API processes: Meta's POSTs spread over them in turn (the simulator stands in for a load balancer).
  receivers="$(printf 'http://127.0.0.1:%s/webhooks/whatsapp,' "${API_PORTS[@]}")"
  SIMULATOR_PORT="$SIMULATOR_PORT" SIMULATOR_WEBHOOK_URL="${SIMULATOR_WEBHOOK_URL:-${receivers%,}}" \
    node --import tsx --import ./scripts/stack/parent-guard.mjs simulator/main.ts > >(sed -u 's/^/[simulator] /') 2>&1 &
  CHILD_PIDS+=($!)
  export UPSTREAM_BASE_URL="http://127.0.0.1:$SIMULATOR_PORT/v25.0"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SIMULATOR_PORT/_sim/health" >/dev/null && break; sleep 0.2; done
  curl -sf "http://127.0.0.1:$SIMULATOR_PORT/_sim/health" >/dev/null || die "the simulator did not start"
  SEED_SIMULATOR_URL="http://127.0.0.1:$SIMULATOR_PORT"
  SEED_ARGS=(SEED_WABA_ID="${SEED_WABA_ID:-310000000000001}" SEED_ACCESS_TOKEN="${SEED_ACCESS_TOKEN:-sim-token-waba-1}"
    SEED_SIMULATOR_URL="$SEED_SIMULATOR_URL")
fi

# The tracing bootstrap, as `npm start` loads it: nothing happens unless OTEL_* variables turn tracing on
# (docs/operations-and-scaling.md, "Traces").
NODE_ARGS=(--import ./scripts/stack/parent-guard.mjs --import ./dist/src/core/tracing/register.js)
if [ "$WATCH" = 1 ]; then
  say "watch mode: recompiling on every change of src/, restarting the API and the worker on every build"
  node --import ./scripts/stack/parent-guard.mjs node_modules/typescript/bin/tsc -w -p tsconfig.build.json --preserveWatchOutput > >(sed -u 's/^/[tsc] /') 2>&1 &
  CHILD_PIDS+=($!)
  NODE_ARGS+=(--watch)
fi
if [ "$SCALED" = 1 ]; then
  say "starting two APIs on ports ${API_PORTS[*]} and two workers…"
  for i in 0 1; do
    PORT="${API_PORTS[$i]}" node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/main.js > >(pretty "api-$((i + 1))") 2>&1 &
    CHILD_PIDS+=($!)
    WORKER_METRICS_PORT="${WORKER_PORTS[$i]}" node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/worker/main.js > >(pretty "worker-$((i + 1))") 2>&1 &
    CHILD_PIDS+=($!)
  done
else
  say "starting the API on port $PORT and the worker…"
  node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/main.js > >(pretty api) 2>&1 &
  CHILD_PIDS+=($!)
  node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/worker/main.js > >(pretty worker) 2>&1 &
  CHILD_PIDS+=($!)
fi

API="http://127.0.0.1:$PORT"
for port in "${API_PORTS[@]}"; do
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break
    for pid in "${CHILD_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a process exited during start-up; see its output above"; done
    sleep 0.2
  done
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null || die "the API on port $port did not become ready within 60 s"
done
# Ready was answered by this script's API, not by something else on that port: every process still runs.
sleep 0.5
for pid in "${CHILD_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a process exited during start-up; see its output above"; done

say "seeding demo data…"
SEED_OUT="$(env "${SEED_ARGS[@]}" SEED_KEY_FILE="$STATE_DIR/demo-key.json" node dist/src/seed/demo-seed.js)" || die "seeding failed"
# The demo key pair the seed printed (placeholders when there is none: a real upstream needs your own account).
read -r DEMO_ACCESS_KEY DEMO_SECRET_KEY < <(node -e '
  const k = JSON.parse(require("fs").readFileSync(0, "utf8")).apiKey;
  console.log(k ? `${k.accessKey} ${k.secretKey}` : "<your-access-key> <your-secret-key>")' <<<"$SEED_OUT")
CONSOLE_LOGIN="$(node -e 'const l = JSON.parse(require("fs").readFileSync(0, "utf8")).consoleLogin; console.log(`${l.email} / ${l.password}`)' <<<"$SEED_OUT")"

WORKER_METRICS="$(printf 'http://127.0.0.1:%s/metrics ' "${WORKER_PORTS[@]}")"
WORKER_METRICS="${WORKER_METRICS% }"
[ "$WORKER_METRICS_PORT" -gt 0 ] 2>/dev/null || WORKER_METRICS="(WORKER_METRICS_PORT=$WORKER_METRICS_PORT: see the worker's log)"
TOPOLOGY=""
if [ "$SCALED" = 1 ]; then
  TOPOLOGY="
  Second API     http://127.0.0.1:${API_PORTS[1]}   (Meta's webhooks go to both in turn)
  PostgreSQL     ${DATABASE_URL}   (DATABASE_URL: every statement; statements ${DATABASE_PREPARED_STATEMENTS:-named})
                 ${DATABASE_DIRECT_URL:-$DATABASE_URL}   (DATABASE_DIRECT_URL: LISTEN, migrations)
                 ${DATABASE_READ_URL:-(none)}   (DATABASE_READ_URL: the lists and analytics)
  Redis Cluster  ${REDIS_CLUSTER_NODES:-${REDIS_URL:-}}"
fi
# The platform-admin command below names the Redis this run uses: a given cluster, or REDIS_URL.
REDIS_SETTING="REDIS_URL=${REDIS_URL:-}"
[ -z "${REDIS_CLUSTER_NODES:-}" ] || REDIS_SETTING="REDIS_CLUSTER_NODES=$REDIS_CLUSTER_NODES"
cat <<INFO

  API            $API$TOPOLOGY
  Web console    $API/console
  Console login  $CONSOLE_LOGIN
  Swagger UI     $API/swagger/docs   (Authorize with the key pair below; every example works as given)
  Health         $API/health/ready
  Metrics        $API/metrics   (worker: $WORKER_METRICS)
  Upstream       $UPSTREAM_BASE_URL
  Demo data      $(echo "$SEED_OUT" | sed '2,$s/^/                 /')

  Walk-through:  README.md "The first hour" (paste it top to bottom), after this line:
    export API=$API ACCESS_KEY=$DEMO_ACCESS_KEY SECRET_KEY=$DEMO_SECRET_KEY
    export SIM=${SEED_SIMULATOR_URL:-<no simulator: UPSTREAM_BASE_URL is given>}

  The queue board ($API/console/queues) is for platform administrators only; to make the demo login one:
    DATABASE_URL=${DATABASE_DIRECT_URL:-$DATABASE_URL} $REDIS_SETTING npm run platform-admin -- grant ${CONSOLE_LOGIN%% /*}

  Ctrl-C stops everything this script started.
INFO

# Run until Ctrl-C or until one process dies (then stop the rest).
wait -n "${CHILD_PIDS[@]}" || true
die "a process exited; stopping everything"
