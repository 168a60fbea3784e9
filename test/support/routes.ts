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
        const path = ['/api/v1', base, String(Reflect.getMetadata(PATH, handler) ?? '')]
          .join('/')
          .replace(/\/+/g, '/')
          .replace(/\/$/, '');
        const access =
          (Reflect.getMetadata(ACCESS_KEY, handler) as AccessMetadata | undefined) ?? classAccess;
        routes.push({ method, path, access });
      }
    }
  }
  return routes.sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));
}
