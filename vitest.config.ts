import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC compiles the TypeScript so that Nest's decorator metadata is emitted (esbuild does not emit it).
const plugins = [
  swc.vite({
    swcrc: false,
    module: { type: 'es6' },
    jsc: {
      target: 'es2022',
      keepClassNames: true,
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    },
  }),
];

export default defineConfig({
  plugins,
  test: {
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        plugins,
        test: { name: 'unit', include: ['libs/**/*.spec.ts', 'apps/**/*.spec.ts', 'tools/**/*.spec.ts'], environment: 'node' },
      },
      {
        plugins,
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e-spec.ts'],
          environment: 'node',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
