#!/usr/bin/env bash
# Sets up everything (dependencies, Prisma client, real PostgreSQL + Redis, migrations, build) and runs
# every test: unit and end-to-end. Exits non-zero on failure and ends with the test runner's summary.
# Given DATABASE_URL / REDIS_URL are used as they are; otherwise private ones are started and stopped.
set -euo pipefail
SCRIPT_NAME=test
source "$(dirname "$0")/lib/common.sh"

ensure_node
ensure_dependencies
ensure_prisma_client
start_services
apply_migrations
build
build_web
ensure_chromium

say "running the test suite (unit + e2e) against PostgreSQL and Redis…"
export NODE_ENV=test
set +e
NODE_OPTIONS='--experimental-vm-modules --no-warnings' node_modules/.bin/jest --ci "$@" 2>&1
code=$?
set -e
exit "$code"
