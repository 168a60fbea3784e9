import { Injectable } from '@nestjs/common';
import { type Actor, AppError } from '#platform';
import { OneTimeTokenService } from '../tokens/one-time-token.service.js';
import { type StreamTokenDto, toStreamTokenResponse } from './dto/stream-token.dto.js';

export const STREAM_TOKEN_TTL_MS = 60_000;

/** Who opened an event stream, as recorded when the token was minted. */
export interface StreamPrincipal {
  userId: string;
  organizationId: string;
}

/**
 * Stream tokens: event streams (SSE, WebSocket) cannot send an Authorization header from a browser, and a JWT
 * must never travel in a URL, so the client trades its session for a single-use token valid 60 seconds.
 */
@Injectable()
export class StreamTokenService {
  constructor(private readonly tokens: OneTimeTokenService) {}

  async issue(actor: Actor): Promise<StreamTokenDto> {
    if (!actor.userId) throw AppError.forbidden('Stream tokens are issued to user sessions only');
    const issued = await this.tokens.issue({
      purpose: 'stream',
      ttlMs: STREAM_TOKEN_TTL_MS,
      userId: actor.userId,
      organizationId: actor.organizationId,
    });
    return toStreamTokenResponse(issued);
  }

  /**
   * Accepts a stream token once: the user and organization it was minted for, or undefined when it is unknown,
   * used or expired. The caller should still check that the membership is active before streaming.
   */
  async consume(token: string): Promise<StreamPrincipal | undefined> {
    const row = await this.tokens.consume('stream', token);
    if (!row?.userId || !row.organizationId) return undefined;
    return { userId: row.userId, organizationId: row.organizationId };
  }
}
