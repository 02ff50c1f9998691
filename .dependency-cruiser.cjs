// @ts-check
// The room map of docs/architecture.md, checked by `npm run lint` (dependency-cruiser). ESLint's
// no-restricted-imports keeps I/O libraries out of the pure files; this checks how the rooms of
// src/ depend on each other, and that nothing imports in a circle.
const IO_ROOMS = 'queue|processors|http|daemon|dead-letters|demo|vat-ops|ingest|cli|emulator|observability';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle (type imports too) means two modules are one room in two files: move what they share below both.',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-the-floor',
      comment: 'src/domain is PURE and the bottom of the house: it imports nothing else from taxsync.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'mapping-imports-no-io',
      comment: 'src/mapping is PURE: canonical events in, request bodies out. It reads the request schemas, nothing that does I/O.',
      severity: 'error',
      from: { path: '^src/mapping/' },
      to: { path: [`^src/(${IO_ROOMS}|connectors|config)/`, '^src/api/(?!schemas/|request\\.ts$)'] },
    },
    {
      name: 'pure-files-reach-no-io-library',
      comment: 'Nothing a pure file imports, however deep, may load Redis, BullMQ, an HTTP client or server, or a Node built-in.',
      severity: 'error',
      from: { path: ['^src/domain/', '^src/mapping/', '^src/connectors/[^/]+/map\\.ts$'] },
      to: {
        reachable: true,
        path: ['^node_modules/(bullmq|ioredis|undici|fastify|pino)/', '^src/(queue|processors|http|daemon|emulator)/'],
      },
    },
    {
      name: 'emulator-is-independent',
      comment: 'src/emulator is a second reading of the service documents (docs/emulator.md, "Independence"): it imports no other taxsync code.',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: { path: '^src/', pathNot: '^src/emulator/' },
    },
    {
      name: 'emulator-through-its-index',
      comment: 'Outside the emulator only its public entry is imported, so a daemon with a configured API never loads it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/emulator/' },
      to: { path: '^src/emulator/', pathNot: '^src/emulator/index\\.ts$' },
    },
    {
      name: 'connectors-are-below-the-pipeline',
      comment: 'A connector verifies and normalises; the queue, the HTTP server and the daemon use it, never the other way round.',
      severity: 'error',
      from: { path: '^src/connectors/' },
      to: { path: `^src/(${IO_ROOMS}|api|mapping)/` },
    },
    {
      name: 'lower-rooms-do-not-import-the-process',
      comment: 'The daemon (process wiring) and the CLI sit on top: only workers/, the CLI and the daemon import them.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|daemon)/' },
      to: { path: '^src/(cli|daemon)/' },
    },
    {
      name: 'http-does-not-import-commands',
      comment: 'The HTTP app is built without listen() and without the command line.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(cli|daemon|demo|vat-ops|ingest)/' },
    },
    {
      name: 'reports-read-data-not-pages',
      comment: 'Reconcile, variance and activity gather data; the web view renders it (http imports them, never the reverse).',
      severity: 'error',
      from: { path: '^src/(activity|reconcile|variance)/' },
      to: { path: '^src/(http|cli|daemon)/' },
    },
    {
      name: 'queue-below-the-services',
      comment: 'The queue layer is used by processors, dead letters, the HTTP server and the daemon; it uses none of them.',
      severity: 'error',
      from: { path: '^src/queue/' },
      to: { path: '^src/(processors|http|daemon|dead-letters|demo|vat-ops|ingest|cli|emulator|connectors)/' },
    },
    {
      name: 'product-does-not-import-tests-or-entry-points',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|workers)/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|coverage)/' },
  },
};
