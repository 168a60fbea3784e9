import { Injectable } from '@nestjs/common';
import type { Actor } from './actor.js';

/** Resolves a bearer JWT into an actor, or throws a 401 AppError. Provided by the identity module. */
export interface BearerResolver {
  resolveBearer(token: string): Promise<Actor>;
}
export const BEARER_RESOLVER = Symbol('BEARER_RESOLVER');

/** Resolves one kind of API key (by prefix) into an actor, or null when the key is unknown. */
export interface ApiKeyResolver {
  readonly prefix: string;
  resolveKey(key: string): Promise<Actor | null>;
}

/**
 * The API-key seam: modules that mint keys (workspace keys, agent keys) register a resolver for their prefix
 * at module init; the access guard asks the one whose prefix matches.
 */
@Injectable()
export class ApiKeyResolverRegistry {
  private readonly resolvers: ApiKeyResolver[] = [];

  register(resolver: ApiKeyResolver): void {
    this.resolvers.push(resolver);
  }

  find(key: string): ApiKeyResolver | undefined {
    return this.resolvers.find((r) => key.startsWith(r.prefix));
  }
}
