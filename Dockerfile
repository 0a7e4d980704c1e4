# syntax=docker/dockerfile:1
# One image for both processes: the API (the default command) or the worker (`node --import
# ./dist/src/core/tracing/register.js dist/src/worker/main.js`). The --import preloads the tracing bootstrap, so the
# image honours the OTEL_* variables (docs/operations-and-scaling.md, "Traces"); without them it does nothing.
# The `migrate` target keeps the dev tooling and applies prisma/migrations (our offline-capable entry point;
# with network access `npx prisma migrate deploy` applies the same files).
# Not built on the development machines (no Docker engine there); kept correct by reading.

# Node 22 LTS (Node 20 is past its end of life; package.json's engines still allow 20.19+, which the
# development machines run).
FROM node:22-bookworm-slim AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

FROM base AS build
COPY package.json package-lock.json ./
# The lockfile exactly (npm ci), never a re-resolution.
RUN npm ci
COPY tsconfig.json tsconfig.build.json prisma.config.ts vite.config.ts ./
COPY prisma ./prisma
COPY scripts/db-types.ts ./scripts/
COPY src ./src
COPY simulator ./simulator
# API + worker (tsc) and the web console (vite → dist/web, served under /console)
# (and the check that the committed Kysely types match the schema). Nothing runs on Prisma's client: the schema has
# no generator; Prisma keeps the schema and the migrations (prisma/migrate.ts).
RUN node_modules/.bin/tsx scripts/db-types.ts --check && npm run build

FROM build AS migrate
CMD ["node_modules/.bin/tsx", "prisma/migrate.ts", "deploy"]

FROM build AS prune
RUN npm prune --omit=dev

# The runtime image: production dependencies and the build only (no Prisma CLI, no TypeScript, no simulator
# sources; the compiled simulator is in dist/ for the compose `simulator` profile).
FROM base AS runtime
ENV NODE_ENV=production
COPY --from=prune /app/package.json ./
COPY --from=prune /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "--import", "./dist/src/core/tracing/register.js", "dist/src/main.js"]
