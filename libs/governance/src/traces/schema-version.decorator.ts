import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { SchemaVersion } from '#platform';

/** The schema version in force for the request (X-Svc-Version, resolved by the versioning hook). */
export const InForceSchemaVersion = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): SchemaVersion => {
    const request = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (!request.schemaVersion) throw new Error('No schema version resolved for this request');
    return request.schemaVersion;
  },
);
