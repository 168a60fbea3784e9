import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };

const ROOT = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !/\.(spec|fixture|d)\.ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

const packageOf = (s: string) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
const external = (s: string) => !s.startsWith('.') && !s.startsWith('#') && !s.startsWith('node:') && !builtinModules.includes(s);

/**
 * The packages a compiled file loads (specs and their fixtures are not loaded): value imports, re-exports and
 * side-effect imports, which must be there (`static`), and dynamic imports, which may fail and be handled
 * (`dynamic`). `import type` is erased.
 */
function loadedPackages(source: string): { static: string[]; dynamic: string[] } {
  const statics = [
    ...source.matchAll(/^\s*import\s+(?!type\s)[^'";]*?from\s+'([^']+)'/gm),
    ...source.matchAll(/^\s*export\s+(?!type\s)[^'";]*?from\s+'([^']+)'/gm),
    ...source.matchAll(/^\s*import\s+'([^']+)'/gm),
  ].map((m) => m[1]!);
  const dynamics = [...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return { static: statics.filter(external).map(packageOf), dynamic: dynamics.filter(external).map(packageOf) };
}

describe('the production install', () => {
  // The image prunes dev dependencies (Dockerfile), so a package the service loads must be a dependency: the
  // artefact smoke (tools/artefact/smoke.mjs) finds the same mistake at start-up, this test names the file.
  // An optional dependency may be missing (the image removes @sparticuz/chromium): it may only be imported dynamically.
  it('has every package that the service, the worker and the CLI load at run time', () => {
    const required = new Set(Object.keys(pkg.dependencies));
    const optional = new Set(Object.keys(pkg.optionalDependencies ?? {}));
    const missing: string[] = [];
    for (const file of [...sources('libs'), ...sources('apps')]) {
      const loaded = loadedPackages(readFileSync(file, 'utf8'));
      for (const name of loaded.static) if (!required.has(name)) missing.push(`${relative(ROOT, file)}: ${name}`);
      for (const name of loaded.dynamic) {
        if (!required.has(name) && !optional.has(name)) missing.push(`${relative(ROOT, file)}: ${name} (dynamic)`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('reads the imports that a compiled file keeps, and only those', () => {
    const source = [
      "import 'reflect-metadata';",
      "import { DOMParser, type Element } from '@xmldom/xmldom';",
      'import {',
      '  a,',
      '  b,',
      "} from 'pkg-a/sub';",
      "import type { Provider } from 'oidc-provider';",
      "export { x } from 'pkg-b';",
      "export type { Y } from 'pkg-c';",
      "const m = await import('@scope/pkg-d');",
      "import { readFileSync } from 'node:fs';",
      "import { join } from 'path';",
      "import { thing } from '../thing.js';",
      "import { platform } from '#platform';",
    ].join('\n');
    expect(loadedPackages(source)).toEqual({
      static: ['@xmldom/xmldom', 'pkg-a', 'pkg-b', 'reflect-metadata'],
      dynamic: ['@scope/pkg-d'],
    });
  });
});
