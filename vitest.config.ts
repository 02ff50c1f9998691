import { defineConfig } from 'vitest/config';

// Two projects: unit tests need nothing and stay fast; integration and e2e tests get a real Redis
// from test/helpers/redis-global-setup.ts (REDIS_URL, else redis-server on a free port, else
// testcontainers).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/helpers/redis-global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
