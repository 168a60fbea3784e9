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

/** The packages a compiled file loads (specs and their fixtures are not loaded): value imports, re-exports, side-effect and dynamic imports (not `import type`). */
function loadedPackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*import\s+(?!type\s)[^'";]*?from\s+'([^']+)'/gm),
    ...source.matchAll(/^\s*export\s+(?!type\s)[^'";]*?from\s+'([^']+)'/gm),
    ...source.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('#') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!));
}

describe('the production install', () => {
  // The image prunes dev dependencies (Dockerfile), so a package the service loads must be a dependency: the
  // artefact smoke (tools/artefact/smoke.mjs) finds the same mistake at start-up, this test names the file.
  it('has every package that the service, the worker and the CLI load at run time', () => {
    const installed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})]);
    const missing: string[] = [];
    for (const file of [...sources('libs'), ...sources('apps')]) {
      for (const name of loadedPackages(readFileSync(file, 'utf8'))) {
        if (!installed.has(name)) missing.push(`${relative(ROOT, file)}: ${name}`);
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
    expect(loadedPackages(source)).toEqual(['@xmldom/xmldom', 'pkg-a', 'pkg-b', 'reflect-metadata', '@scope/pkg-d']);
  });
});
