import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The cluster suite (`npm run test:cluster`; test/cluster/): the built service as several processes behind HAProxy.
 * Apart from `npm test`: each file starts a cluster of its own, and the files run one after another, since each
 * loads both cores of the machine.
 */
export default defineConfig({
  plugins: base.plugins,
  resolve: base.resolve,
  test: {
    name: 'cluster',
    include: ['test/cluster/**/*.cluster-spec.ts'],
    environment: 'node',
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
