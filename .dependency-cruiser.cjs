// The layer rules of docs/architecture.md ("Layers"), checked by `npm run lint:deps` (part of `npm run lint`, which
// ./scripts/test.sh runs before the tests). A folder of src/ may import its own files and the folders of the layers
// below it, never a folder of its own layer or of a layer above.

/** src/ folders from the bottom up; the folders of one layer are independent of each other. */
const LAYERS = [
  ['core'],
  ['upstream'],
  ['auth'],
  ['audit', 'organizations'],
  ['accounts'],
  ['events'],
  ['messages'],
  ['webhooks', 'campaigns', 'media'],
  // One contact's data across the features' tables (export, erasure); content retention across the same tables.
  ['contacts', 'retention'],
  ['console', 'console-web', 'health'],
  // The processes' composition: the API's files at the root of src/ (main, app.module, app.setup, swagger) and the
  // worker's folder; then the demo seed, which runs the API's module.
  ['worker', '<root>'],
  ['seed'],
];

const folderPattern = (folder) => (folder === '<root>' ? '^src/[^/]+$' : `^src/${folder}/`);
const anyOf = (folders) => `(${folders.map(folderPattern).join('|')})`;

const layerOrder = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  return layer.flatMap((folder) => {
    const siblings = layer.filter((f) => f !== folder);
    return [
      ...(above.length > 0
        ? [
            {
              name: 'layer-order',
              comment: `src/${folder} (layer ${i + 1}) imports a layer above it: dependencies point down only (docs/architecture.md)`,
              severity: 'error',
              from: { path: folderPattern(folder) },
              to: { path: anyOf(above) },
            },
          ]
        : []),
      ...(siblings.length > 0 && folder !== '<root>'
        ? [
            {
              name: 'no-cross-folder-cycles',
              comment: `src/${folder} imports ${siblings.join(', ')}, of its own layer: folders of one layer stay independent, so no two folders ever depend on each other`,
              severity: 'error',
              from: { path: folderPattern(folder) },
              to: { path: anyOf(siblings) },
            },
          ]
        : []),
    ];
  });
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop (type-only imports included): split out what both need',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-cross-folder-cycles',
      comment: 'Two folders that depend on each other, through whichever files: move what both need below them',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src/[^/]+|simulator|scripts|bench|prisma|test)$' },
      to: { circular: true },
    },
    {
      name: 'no-sub-folder-cycles',
      comment:
        'Two folders inside one (src/accounts/standing and src/accounts/business-accounts, test/utils and test/e2e, …) that depend on each other: move what both need below them, or the file into the folder that owns it',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src/[^/]+|simulator|scripts|bench|prisma|test)/' },
      to: { circular: true },
    },
    ...layerOrder,
    {
      name: 'http-at-the-edge',
      comment:
        "Only controllers (*.controller.ts, the fast path's too) and tests speak HTTP: services, repositories, DTOs and views use core/contract, core/rows and domain errors, never core/http; nor does core/contract, the vocabulary below it (docs/architecture.md)",
      severity: 'error',
      from: {
        path: '^src/((messages|accounts|webhooks|media|events|campaigns|contacts|console|health|audit|upstream)/|core/contract/)',
        // Tests (*.spec.ts) may check what the edge answers.
        pathNot: '\\.(controller|spec)\\.ts$',
      },
      to: { path: '^src/core/http/' },
    },
    {
      name: 'src-stands-alone',
      comment: 'The service does not import its tests, benchmarks, scripts or the simulator',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts|simulator)/' },
    },
    {
      name: 'prisma-for-schema-and-migrations-only',
      comment:
        'The service, its tests, benches and the simulator run on Kysely (src/core/db): Prisma keeps the schema and the migrations (prisma/, scripts/db-types.ts) and nothing else imports it',
      severity: 'error',
      from: { path: '^(src|test|bench|simulator)/' },
      to: { path: ['(^|/)node_modules/@prisma/', '^@prisma/', '^prisma($|/)'] },
    },
    {
      name: 'simulator-stands-alone',
      comment: "The simulator stands in for Meta: it knows nothing of the service's code",
      severity: 'error',
      from: { path: '^simulator/' },
      to: { path: '^(src|test|bench)/' },
    },
    {
      name: 'web-stands-alone',
      comment:
        'The browser console is built on its own (vite): it imports its own files and the generated API types only',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: '^src/(?!web/)' },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules/' },
    exclude: { path: '^dist/' },
    // Type-only imports count: a type shared both ways is a loop too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
