import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_KEY, type AccessMetadata } from '../libs/platform/src/index.js';
import { TestContext } from './support/app.js';

// Nest's route metadata keys (PATH_METADATA, METHOD_METADATA in @nestjs/common/constants).
const PATH = 'path';
const METHOD = 'method';

function describeAccess(meta: AccessMetadata | undefined): string {
  if (!meta) return 'NONE';
  if (meta.public) return 'public';
  const parts = [`via=${(meta.via ?? ['jwt']).join('|')}`];
  if (meta.roles) parts.push(`roles=${meta.roles.join('|')}`);
  if (meta.feature) parts.push(`feature=${meta.feature}`);
  if (meta.write !== undefined) parts.push(`write=${meta.write}`);
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
    const lines: string[] = [];
    for (const module of ctx.app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
        if (!controller) continue;
        const base = String(Reflect.getMetadata(PATH, controller) ?? '');
        const classAccess = Reflect.getMetadata(ACCESS_KEY, controller) as AccessMetadata | undefined;
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = controller.prototype[name as keyof typeof controller.prototype] as unknown;
          if (typeof handler !== 'function' || Reflect.getMetadata(METHOD, handler) === undefined) continue;
          const method = RequestMethod[Reflect.getMetadata(METHOD, handler) as number];
          const path = ['/api/v1', base, String(Reflect.getMetadata(PATH, handler) ?? '')]
            .join('/')
            .replace(/\/+/g, '/')
            .replace(/\/$/, '');
          const access =
            (Reflect.getMetadata(ACCESS_KEY, handler) as AccessMetadata | undefined) ?? classAccess;
          lines.push(`${method} ${path} -> ${describeAccess(access)}`);
        }
      }
    }
    lines.sort();
    expect(lines.filter((l) => l.endsWith('NONE'))).toEqual([]);
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.join('\n')).toMatchSnapshot();
  });
});
