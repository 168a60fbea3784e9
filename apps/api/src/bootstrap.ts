import 'reflect-metadata';
import type { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  APP_CONFIG,
  AppLogger,
  type AppConfig,
  configureHttpApp,
  createFastifyAdapter,
  HTTP_APP_OPTIONS,
  loadConfig,
} from '#platform';
import { buildOpenApiDocument, setupDocs } from './openapi.js';

/**
 * Builds the HTTP application exactly as production runs it (adapter, hooks, docs), without listening.
 * The end-to-end tests call this with overridden providers.
 */
export async function createHttpApp(
  module: Type<unknown> | DynamicModule,
  config: AppConfig = loadConfig(),
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module, createFastifyAdapter(config), {
    ...HTTP_APP_OPTIONS,
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(AppLogger));
  await configureHttpApp(app, app.get<AppConfig>(APP_CONFIG));
  setupDocs(app, buildOpenApiDocument(app, config));
  return app;
}
