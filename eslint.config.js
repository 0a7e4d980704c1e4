// ESLint (flat config) with typescript-eslint's type-aware rules: `npm run lint:eslint`, part of `npm run lint`, which
// ./scripts/test.sh runs before the tests. Formatting is Prettier's (.prettierrc.json), not ESLint's.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'src/generated/',
      'src/web/api-types.ts',
      'test-results/',
      'coverage/',
      '.local/',
      'bench/.tmp/',
      'bench/results/',
    ],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Each file is checked with the tsconfig that owns it: tsconfig.json (service, tests, bench, scripts,
      // simulator), src/web/tsconfig.json (the browser console).
      parserOptions: {
        projectService: { allowDefaultProject: ['vite.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits loses its error: await it, or mark a deliberate fire-and-forget with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      // A union grown by one member (a status, an event kind, an error class) must be handled where it is switched on.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A variable that a closure reads before its one assignment cannot be const (it would throw there).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // No SQL text in the service's statements: they are Kysely builders checked against src/core/db/database.ts.
    // The PostgreSQL constructs Kysely has no builder for are typed fragments in src/core/db/pg.ts (each run against
    // PostgreSQL by test/medium/pg-fragments.spec.ts); only src/core/db may write SQL with Kysely's `sql` tag.
    files: ['src/**/*.ts'],
    ignores: ['src/core/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'kysely',
              importNames: ['sql'],
              message:
                'No SQL text outside src/core/db: use the query builder, or add a typed fragment to src/core/db/pg.ts with its test.',
            },
          ],
        },
      ],
    },
  },
  {
    // Meta's error codes are read through src/upstream/meta-error-catalogue.ts (its predicates: transient, throughput,
    // marketing stop, rate limit, class, category): a code compared anywhere else is a second catalogue to keep.
    files: ['src/**/*.ts'],
    ignores: ['src/upstream/meta-error-catalogue.ts', '**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'BinaryExpression[operator=/^[!=]==?$/] > Literal[raw=/^1[3][0-9]{4}$/]',
          message: "Compare Meta's error codes through src/upstream/meta-error-catalogue.ts (add a predicate there).",
        },
        {
          selector: 'SwitchCase > Literal[raw=/^1[3][0-9]{4}$/]',
          message: "Compare Meta's error codes through src/upstream/meta-error-catalogue.ts (add a predicate there).",
        },
      ],
    },
  },
  {
    // Tests read HTTP answers through supertest, whose `res.body` is `any` by its type: every assertion on a body
    // would need a cast that checks nothing the assertion itself does not. The rest of the type-aware rules apply.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Stand-ins for asynchronous interfaces (a pool's query, a feed check, a probe polled by eventually()) are
      // written async without awaiting anything.
      '@typescript-eslint/require-await': 'off',
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
