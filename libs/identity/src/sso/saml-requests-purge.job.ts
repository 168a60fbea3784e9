import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, JobScheduler } from '#platform';
import { SamlAssertionsRepository } from './saml-assertions.repository.js';
import { SamlRequestsRepository } from './saml-requests.repository.js';

const PURGE_INTERVAL_MS = 3_600_000;

/**
 * `saml-requests-purge`: every hour (once across the processes that run jobs), the SAML requests and accepted
 * message ids past their expiry are deleted. The deletes are idempotent all the same.
 */
@Injectable()
export class SamlRequestsPurgeJob implements OnModuleInit {
  constructor(
    private readonly scheduler: JobScheduler,
    private readonly requests: SamlRequestsRepository,
    private readonly assertions: SamlAssertionsRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'saml-requests-purge',
      intervalMs: PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.purge(),
    });
  }

  /** Deletes the expired requests, then the expired ids; how many rows in all. */
  async purge(): Promise<number> {
    const now = this.clock.now();
    const requests = await this.requests.purgeExpired(now);
    const assertions = await this.assertions.purgeExpired(now);
    return requests + assertions;
  }
}
