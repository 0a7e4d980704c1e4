// ESLint (flat config) with typescript-eslint's type-aware rules: `npm run lint:eslint`, part of `npm run lint`, which
// ./scripts/test.sh runs before the tests. Formatting is Prettier's (.prettierrc.json), not ESLint's.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/', 'node_modules/', 'src/generated/', 'src/web/api-types.ts', 'test-results/', 'coverage/', '.local/', 'bench/.tmp/', 'bench/results/'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Each file is checked with the tsconfig that owns it: tsconfig.json (service, tests, bench, scripts,
      // simulator), src/web/tsconfig.json (the browser console).
      parserOptions: { projectService: { allowDefaultProject: ['vite.config.ts'] }, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its error: await it, or mark a deliberate fire-and-forget with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      // A union grown by one member (a status, an event kind, an error class) must be handled where it is switched on.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['src/web/**/*.tsx'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
