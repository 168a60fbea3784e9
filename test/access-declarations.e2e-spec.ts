import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessMetadata } from '#platform';
import { TestContext } from './support/app.js';
import { listRoutes } from './support/routes.js';

function describeAccess(meta: AccessMetadata | undefined): string {
  if (!meta) return 'NONE';
  if (meta.public) return 'public';
  const parts = [`via=${(meta.via ?? ['jwt']).join('|')}`];
  if (meta.roles) parts.push(`roles=${meta.roles.join('|')}`);
  if (meta.feature) parts.push(`feature=${meta.feature}`);
  if (meta.write !== undefined) parts.push(`write=${meta.write}`);
  if (meta.rateLimit) parts.push(`rateLimit=${meta.rateLimit}`);
  if (meta.optional) parts.push('optional');
  if (meta.accountWide) parts.push('accountWide');
  if (meta.allowDeactivated) parts.push('allowDeactivated');
  return parts.join(' ');
}

/**
 * Every route's access declaration, as one list. A change in the snapshot is a permission change and is reviewed
 * as one; a route without a declaration fails the test (the guard would refuse it at run time).
 */
describe('access declarations', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('declares access on every route, and the declarations match the reviewed snapshot', () => {
    const lines = listRoutes(ctx.app).map(
      (r) =>
        `${r.method} ${r.path} -> ${describeAccess(r.access)}${r.guards.length ? ` guards=${r.guards.join('|')}` : ''}`,
    );
    lines.sort();
    expect(lines.filter((l) => l.endsWith('NONE'))).toEqual([]);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.join('\n')).toMatchSnapshot();
  });
});
