import type { INestApplication } from '@nestjs/common';
import { RequestMethod } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ACCESS_KEY, type AccessMetadata } from '#platform';

// Nest's route metadata keys (PATH_METADATA, METHOD_METADATA in @nestjs/common/constants).
const PATH = 'path';
const METHOD = 'method';

export interface RouteInfo {
  method: string;
  /** Full path with Nest parameters, e.g. /api/v1/audit/:id */
  path: string;
  access: AccessMetadata | undefined;
  /** Route guards besides the global one (`@UseGuards`), by class name: the SCIM token's guard. */
  guards: string[];
}

/** Every route of the application with its access declaration, read from the controllers' metadata. */
export function listRoutes(app: INestApplication): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH, controller) ?? '');
      const classAccess = Reflect.getMetadata(ACCESS_KEY, controller) as AccessMetadata | undefined;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name as keyof typeof controller.prototype] as unknown;
        if (typeof handler !== 'function' || Reflect.getMetadata(METHOD, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD, handler) as number]!;
        // SCIM is mounted at the host root, outside the versioned prefix (/scim/v2).
        const prefix = base.startsWith('scim/') ? '' : '/api/v1';
        const path = [prefix, base, String(Reflect.getMetadata(PATH, handler) ?? '')]
          .join('/')
          .replace(/\/+/g, '/')
          .replace(/\/$/, '');
        const access =
          (Reflect.getMetadata(ACCESS_KEY, handler) as AccessMetadata | undefined) ?? classAccess;
        const guards = [
          ...((Reflect.getMetadata('__guards__', controller) as { name: string }[] | undefined) ?? []),
          ...((Reflect.getMetadata('__guards__', handler) as { name: string }[] | undefined) ?? []),
        ].map((g) => g.name);
        routes.push({ method, path, access, guards });
      }
    }
  }
  return routes.sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));
}
