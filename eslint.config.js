// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Pure layers stay pure: no Redis, no HTTP, no Node built-ins (STYLE.md, habit 1).
const PURE_FILES = ['src/domain/**/*.ts', 'src/mapping/**/*.ts', 'src/connectors/*/map.ts'];
const IMPURE_MODULES = {
  paths: [
    { name: 'bullmq', message: 'Pure layer: pass queue effects in from processors/.' },
    { name: 'ioredis', message: 'Pure layer: pass Redis effects in from queue/ or processors/.' },
    { name: 'undici', message: 'Pure layer: HTTP belongs in src/api.' },
  ],
  patterns: [
    { group: ['node:*'], message: 'Pure layer: no Node built-ins here.' },
    { group: ['bullmq/*', 'ioredis/*', 'undici/*'], message: 'Pure layer: no I/O libraries.' },
  ],
};

// The emulator is a second, independent reading of the two service documents: it may not borrow
// the client's schemas, the mapping's validation or the domain's reference data, or a misreading
// would be shared and invisible on both sides (docs/emulator.md, "Independence").
const EMULATOR_FORBIDDEN = ['api', 'mapping', 'connectors', 'domain', 'queue', 'processors', 'config', 'http', 'cli', 'observability', 'daemon', 'dead-letters', 'demo', 'vat-ops', 'ingest'];
const EMULATOR_INDEPENDENT = {
  patterns: [
    {
      group: EMULATOR_FORBIDDEN.flatMap((dir) => [`../${dir}`, `../${dir}/**`, `../../${dir}`, `../../${dir}/**`, `../../../${dir}/**`, `**/src/${dir}/**`]),
      message: 'src/emulator is an independent reading of the specs: write it again from the service documents, do not import taxsync code.',
    },
  ],
};
// Outside the emulator (and the CLI/daemon that start it), only its public entry may be imported.
const EMULATOR_INTERNALS = {
  patterns: [
    {
      group: ['**/emulator/**', '!**/emulator/index.js'],
      message: 'Import the emulator only through src/emulator/index.ts.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.taxsync/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/emulator/**'],
    rules: { 'no-restricted-imports': ['error', EMULATOR_INTERNALS] },
  },
  {
    // Options of one rule replace each other: the pure layers get both lists.
    files: PURE_FILES,
    rules: { 'no-restricted-imports': ['error', { ...IMPURE_MODULES, patterns: [...IMPURE_MODULES.patterns, ...EMULATOR_INTERNALS.patterns] }] },
  },
  {
    files: ['src/emulator/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', EMULATOR_INDEPENDENT] },
  },
  {
    // Money never becomes a number: forbid parseFloat/Number() on amounts in pure layers.
    files: PURE_FILES,
    rules: {
      'no-restricted-globals': ['error', { name: 'parseFloat', message: 'Money is decimal.js, never a number.' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['.dependency-cruiser.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, sourceType: 'commonjs', globals: { ...globals.node } },
  },
);
