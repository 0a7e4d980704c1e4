// Prisma CLI config. The CLI tries to download a native schema engine before every command; offline we
// point it at any existing file so that `prisma validate` / `prisma format` (which need no engine) run. Migrations run
// through our own WASM-engine entry point (prisma/migrate.ts), see README "Why our own migrate command".
import { defineConfig } from 'prisma/config';

process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= '/bin/false';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
