import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The tests of memgate beyond one machine (test/cluster): the settings of vitest.config.ts, on
 * servers that scripts/with-cluster.sh (a primary, its streaming replica, another server) or
 * scripts/with-patroni.sh (Patroni + etcd + HAProxy) start. `npm run test:cluster -- FILES`.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/cluster/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
  },
});
