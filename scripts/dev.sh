#!/usr/bin/env bash
# One command to a running local service: installs what is missing, starts real PostgreSQL and Redis when
# DATABASE_URL / REDIS_URL are not given, the WhatsApp Cloud API simulator when UPSTREAM_BASE_URL is not
# given, applies migrations, seeds demo data, then runs the API and the worker until Ctrl-C.
# Every variable already set in the environment wins over .env and over the defaults here.
#   --watch (npm run start:dev): the TypeScript compiler keeps compiling src/ on every change and the API and
#   the worker restart on every new build (tsc -w + node --watch).
set -euo pipefail
SCRIPT_NAME=dev
source "$(dirname "$0")/lib/common.sh"
WATCH=0
for arg in "$@"; do
  case "$arg" in
    --watch) WATCH=1 ;;
    *) die "unknown argument: $arg (usage: ./scripts/dev.sh [--watch])" ;;
  esac
done

ensure_node
ensure_dependencies
ensure_prisma_client

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
GIVEN_PORT="${PORT:-}"
load_env_file .env

# A PORT given in the environment is used as it is; otherwise .env's (3000), or a free one if that is taken.
if [ -n "$GIVEN_PORT" ]; then PORT="$GIVEN_PORT"; else PORT="$(free_port "${PORT:-3000}")"; fi
export PORT
# Inbound media links (GET /messages/:id → media.url) point at this API unless told otherwise.
export PUBLIC_BASE_URL="${PUBLIC_BASE_URL:-http://127.0.0.1:$PORT}"
# The worker's metrics and health port (GET /metrics, /health): the given one, else 9464 or the next free one.
WORKER_METRICS_PORT="${WORKER_METRICS_PORT:-$(free_port 9464)}"
export WORKER_METRICS_PORT
start_services
apply_migrations
build

pretty() { node_modules/.bin/pino-pretty --colorize --singleLine --translateTime 'HH:MM:ss.l' --ignore 'pid,hostname,service' | sed -u "s/^/[$1] /"; }

# The node processes below exit by themselves when this script is gone (even after a kill -9; see
# scripts/stack/parent-guard.mjs), as PostgreSQL and Redis do (start_services).
export PARENT_GUARD_PID=$$

# The simulator stands in for Meta unless UPSTREAM_BASE_URL points somewhere real.
SEED_ARGS=()
if [ -z "${UPSTREAM_BASE_URL:-}" ]; then
  SIMULATOR_PORT="${SIMULATOR_PORT:-$(free_port 4010)}"
  say "starting the WhatsApp Cloud API simulator on port $SIMULATOR_PORT…"
  SIMULATOR_PORT="$SIMULATOR_PORT" SIMULATOR_WEBHOOK_URL="${SIMULATOR_WEBHOOK_URL:-http://127.0.0.1:$PORT/webhooks/whatsapp}" \
    node --import tsx --import ./scripts/stack/parent-guard.mjs simulator/main.ts > >(sed -u 's/^/[simulator] /') 2>&1 &
  CHILD_PIDS+=($!)
  export UPSTREAM_BASE_URL="http://127.0.0.1:$SIMULATOR_PORT/v23.0"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SIMULATOR_PORT/_sim/health" >/dev/null && break; sleep 0.2; done
  curl -sf "http://127.0.0.1:$SIMULATOR_PORT/_sim/health" >/dev/null || die "the simulator did not start"
  SEED_ARGS=(SEED_WABA_ID="${SEED_WABA_ID:-310000000000001}" SEED_ACCESS_TOKEN="${SEED_ACCESS_TOKEN:-sim-token-waba-1}")
fi

NODE_ARGS=(--import ./scripts/stack/parent-guard.mjs)
if [ "$WATCH" = 1 ]; then
  say "watch mode: recompiling on every change of src/, restarting the API and the worker on every build"
  node --import ./scripts/stack/parent-guard.mjs node_modules/typescript/bin/tsc -w -p tsconfig.build.json --preserveWatchOutput > >(sed -u 's/^/[tsc] /') 2>&1 &
  CHILD_PIDS+=($!)
  NODE_ARGS+=(--watch)
fi
say "starting the API on port $PORT and the worker…"
node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/main.js > >(pretty api) 2>&1 &
CHILD_PIDS+=($!)
node ${NODE_ARGS[@]+"${NODE_ARGS[@]}"} dist/src/worker.js > >(pretty worker) 2>&1 &
CHILD_PIDS+=($!)

API="http://127.0.0.1:$PORT"
for _ in $(seq 1 300); do
  curl -sf "$API/health/ready" >/dev/null && break
  for pid in "${CHILD_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a process exited during start-up; see its output above"; done
  sleep 0.2
done
curl -sf "$API/health/ready" >/dev/null || die "the API did not become ready within 60 s"

# The web console is built while nothing waits on it: the API is already answering (/console says 503 until then).
build_web

say "seeding demo data…"
SEED_OUT="$(env "${SEED_ARGS[@]}" SEED_KEY_FILE="$STATE_DIR/demo-key.json" node dist/src/seed/demo-seed.js)" || die "seeding failed"
# The demo key pair the seed printed (placeholders when there is none: a real upstream needs your own account).
read -r DEMO_ACCESS_KEY DEMO_SECRET_KEY < <(node -e '
  const k = JSON.parse(require("fs").readFileSync(0, "utf8")).apiKey;
  console.log(k ? `${k.accessKey} ${k.secretKey}` : "<your-access-key> <your-secret-key>")' <<<"$SEED_OUT")
CONSOLE_LOGIN="$(node -e 'const l = JSON.parse(require("fs").readFileSync(0, "utf8")).consoleLogin; console.log(`${l.email} / ${l.password}`)' <<<"$SEED_OUT")"

cat <<INFO

  API            $API
  Web console    $API/console   (queue health: $API/console/queues)
  Console login  $CONSOLE_LOGIN
  Swagger UI     $API/swagger/docs
  Health         $API/health/ready
  Metrics        $API/metrics   (worker: http://127.0.0.1:$WORKER_METRICS_PORT/metrics)
  Upstream       $UPSTREAM_BASE_URL
  Demo data      $(echo "$SEED_OUT" | sed '2,$s/^/                 /')

  Try:  curl -s -X POST $API/messages -H 'content-type: application/json' \\
          -H "x-access-key: $DEMO_ACCESS_KEY" -H "x-secret-key: $DEMO_SECRET_KEY" \\
          -d '{"phoneNumberId":"402000000000011","to":"447700900123","type":"template","templateName":"hello_world","templateLanguage":"en_US"}'

  Ctrl-C stops everything this script started.
INFO

# Run until Ctrl-C or until one process dies (then stop the rest).
wait -n "${CHILD_PIDS[@]}" || true
die "a process exited; stopping everything"
