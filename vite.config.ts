import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The web console (src/web) built to dist/web, which the API serves under /console (src/console-web).
 * No React plugin: @vitejs/plugin-react's optional Babel peers do not resolve next to jest's Babel 7
 * (npm ERESOLVE), and Vite's own transform already compiles TSX with the automatic JSX runtime. The build
 * is plain static files; fast refresh is the only thing given up.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./src/web', import.meta.url)),
  base: '/console/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // One bundle (≈ 540 kB, 150 kB gzipped: React and the generated API types), cached immutably under a hashed
    // name and only ever loaded from this origin: splitting it would buy an operator console nothing. The default
    // 500 kB limit warned on every cold start although nothing was wrong.
    chunkSizeWarningLimit: 1024,
  },
  server: {
    // `npx vite` for UI work: API calls go to a running ./scripts/dev.sh (API_URL, default port 3000).
    proxy: Object.fromEntries(
      ['/auth', '/business-accounts', '/api-keys', '/webhooks', '/console/queues'].map((p) => [
        p,
        process.env.API_URL ?? 'http://127.0.0.1:3000',
      ]),
    ),
  },
});
