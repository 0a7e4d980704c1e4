#!/usr/bin/env bash
# npm run lint: ESLint (type-aware, zero warnings), the layer rules (dependency-cruiser) and Prettier's check.
# Runs all three and names each that failed, so one failure does not hide the others. Needs the Prisma client
# (npm run db:generate): the type-aware rules read its types.
set -uo pipefail
cd "$(dirname "$0")/.."
failed=()
npm run --silent lint:eslint || failed+=(eslint)
npm run --silent lint:deps || failed+=(dependency-cruiser)
npm run --silent format:check || failed+=("prettier (npm run format writes it)")
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'lint: FAILED: %s\n' "$(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" >&2
  exit 1
fi
echo 'lint: eslint, dependency-cruiser and prettier passed'
