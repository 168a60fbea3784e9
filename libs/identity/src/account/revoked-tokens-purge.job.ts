import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock, JobScheduler } from '#platform';
import { SessionsRepository } from '../sessions/sessions.repository.js';
import { OneTimeTokenService } from '../tokens/one-time-token.service.js';

/** How often expired rows are dropped from the jti blacklist. */
export const REVOKED_TOKENS_PURGE_INTERVAL_MS = 10 * 60 * 1000;

/**
 * How long a revoked token stays blacklisted after its natural expiry. A revoked jti answers SESSION_REVOKED
 * even after its expiry (docs/identity-administrators.md, "Identity, roles and plans";
 * test/sessions.e2e-spec.ts); keeping the row this long honours that for any token still in circulation while
 * the blacklist stays bounded by the revocations of about three months.
 */
export const REVOCATION_RETENTION_MS = 90 * 24 * 3600 * 1000;

/**
 * Keeps the jti blacklist (checked on every authenticated request) and the session list bounded: blacklist
 * and session rows are deleted once their token expired more than REVOCATION_RETENTION_MS ago, and spent or
 * expired single-use tokens a day after expiry. A job of the JobScheduler (it runs where background work runs,
 * WORKERS=on, once per interval across those processes); the deletes are idempotent all the same.
 */
@Injectable()
export class RevokedTokensPurgeJob implements OnModuleInit {
  private readonly logger = new Logger('RevokedTokensPurge');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly sessions: SessionsRepository,
    private readonly tokens: OneTimeTokenService,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'revoked-tokens-purge',
      intervalMs: REVOKED_TOKENS_PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.tick(),
    });
  }

  /** Deletes blacklist and session rows past the retention, and old single-use tokens; returns the blacklist count. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - REVOCATION_RETENTION_MS);
    const purged = await this.sessions.purgeExpired(cutoff);
    await this.sessions.purgeSessionsExpiredBefore(cutoff);
    await this.tokens.purgeExpired();
    return purged;
  }

  private async tick(): Promise<void> {
    try {
      const purged = await this.purge();
      if (purged > 0) this.logger.debug({ purged }, 'Expired revoked tokens purged');
    } catch (err) {
      this.logger.warn({ err }, 'Purging expired revoked tokens failed; retrying at the next interval');
    }
  }
}
