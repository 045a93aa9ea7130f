import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // Node resolves graphql to its CommonJS build for Pothos and yoga; the tests must share that copy.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts'],
    // Tests of several servers (a replica, a Patroni cluster) run under vitest.cluster.config.ts.
    exclude: [...configDefaults.exclude, 'test/cluster/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // The gateway under test runs as `npm start` serves it (src/main.ts): graphql-js in production mode.
    env: { NODE_ENV: 'production' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
