import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { configDefaults, defineConfig } from 'vitest/config';
import pkg from './package.json' with { type: 'json' };
import ownModuleGraph from './test/own-module-graph.json' with { type: 'json' };

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

// The libraries' public entries (#platform, #identity, …) are package.json `imports`: Node, running the build, takes
// the `default` target (the compiled file in dist/), tsc takes `types` (the TypeScript source). Tests run the source
// too, so each entry is aliased here to its `types` target.
const resolve = {
  alias: Object.entries(pkg.imports).map(([name, target]) => ({
    find: new RegExp(`^${name}$`),
    replacement: fileURLToPath(new URL(target.types, import.meta.url)),
  })),
};
// The typed client (packages/client) is a package of its own; tests run its source, as tsc reads it (tsconfig paths).
resolve.alias.push({
  find: /^@governance\/client$/,
  replacement: fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)),
});

// The database tiers share one module graph per worker (`isolate: false`): each file still starts its own application
// on its own database clone, but the application's modules are loaded once per worker instead of once per file,
// which was most of the suite's time. A file that replaces a module (`vi.mock`) needs a graph of its own: it is
// listed in test/own-module-graph.json and runs in the `e2e-isolated` project (lint refuses `vi.mock` elsewhere there).
const OWN_MODULE_GRAPH: string[] = ownModuleGraph;

/** A tier whose files each get a database cloned from the run's template (test/support/global-setup.ts). */
function databaseTier(test: { name: string; include: string[]; exclude?: string[]; isolate?: boolean }) {
  return {
    plugins,
    resolve,
    test: {
      environment: 'node' as const,
      globalSetup: ['test/support/global-setup.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      isolate: false,
      ...test,
    },
  };
}

export default defineConfig({
  plugins,
  resolve,
  test: {
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        plugins,
        resolve,
        test: {
          name: 'unit',
          include: [
            'libs/**/*.spec.ts',
            'apps/**/*.spec.ts',
            'tools/**/*.spec.ts',
            'packages/**/*.spec.ts',
            'eslint.rules.spec.ts',
          ],
          environment: 'node',
        },
      },
      // Services with their real repositories on a real database, without HTTP (test/support/medium.ts).
      databaseTier({ name: 'medium', include: ['test/medium/**/*.medium-spec.ts'] }),
      databaseTier({
        name: 'e2e',
        include: ['test/**/*.e2e-spec.ts'],
        exclude: [...configDefaults.exclude, ...OWN_MODULE_GRAPH],
      }),
      databaseTier({ name: 'e2e-isolated', include: OWN_MODULE_GRAPH, isolate: true }),
    ],
  },
});
