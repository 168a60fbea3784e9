import { Injectable } from '@nestjs/common';
import { type Actor, AppError } from '#platform';
import { SessionsRepository } from '../sessions/sessions.repository.js';
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
  constructor(
    private readonly tokens: OneTimeTokenService,
    private readonly sessions: SessionsRepository,
  ) {}

  /** A token for the caller's membership and session: it opens nothing once that session is revoked. */
  async issue(actor: Actor): Promise<StreamTokenDto> {
    if (!actor.userId || !actor.jti)
      throw AppError.forbidden('Stream tokens are issued to user sessions only');
    const issued = await this.tokens.issue({
      purpose: 'stream',
      ttlMs: STREAM_TOKEN_TTL_MS,
      userId: actor.userId,
      organizationId: actor.organizationId,
      payload: { jti: actor.jti },
    });
    return toStreamTokenResponse(issued);
  }

  /**
   * Accepts a stream token once: the user and organization it was minted for, or undefined when it is unknown,
   * used or expired, or the session that minted it has been revoked since (a logout within its 60 seconds). The
   * caller should still check that the membership is active before streaming.
   */
  async consume(token: string): Promise<StreamPrincipal | undefined> {
    const row = await this.tokens.consume('stream', token);
    if (!row?.userId || !row.organizationId) return undefined;
    const jti = (row.payload as { jti?: unknown } | null)?.jti;
    if (typeof jti !== 'string') return undefined;
    const session = await this.sessions.findByJti(jti);
    if (!session || session.revokedAt) return undefined;
    return { userId: row.userId, organizationId: row.organizationId };
  }
}
