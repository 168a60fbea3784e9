import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Outbox, type OutboxDelivery, OutboxRetry } from '#platform';
import { IntegrationsRepository } from './integrations.repository.js';
import { type IntegrationMessage, IntegrationsService } from './integrations.service.js';

/** Pauses after failed attempts, as for webhooks: 30 s, 2 min, 10 min, 1 h, 6 h (±20 %). */
export const INTEGRATION_BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;
export const INTEGRATION_MAX_ATTEMPTS = 6;

export interface IntegrationNotice {
  integrationId: string;
  message: Omit<IntegrationMessage, 'id'>;
}

declare module '#platform' {
  interface OutboxTopics {
    /** One notification to one integration (alerts). */
    'integration.notify': { payload: IntegrationNotice };
  }
}

/**
 * Notifications through integrations, as outbox messages: `enqueue` writes one message per integration in the
 * caller's transaction, so a notification exists if and only if the change that caused it committed, and it is
 * sent after the commit, retried with backoff (a receiver's `Retry-After` honoured) until accepted or out of
 * attempts. A webhook integration's `webhook-id` is the message id, the same on every attempt. An e-mail
 * integration's attempt writes one mail per confirmed recipient to the outbox, each then sent and retried on its own.
 * An integration deleted in between is skipped, and so is every notification of an organization deleted in between.
 */
@Injectable()
export class IntegrationNotifier implements OnModuleInit {
  private readonly logger = new Logger('IntegrationNotifier');

  constructor(
    private readonly outbox: Outbox,
    private readonly repo: IntegrationsRepository,
    private readonly integrations: IntegrationsService,
  ) {}

  onModuleInit(): void {
    this.outbox.handle('integration.notify', {
      deliver: (message) => this.attempt(message),
      maxAttempts: INTEGRATION_MAX_ATTEMPTS,
      backoffMs: INTEGRATION_BACKOFF_MS,
      jitter: 0.2,
      leaseMs: 60_000,
    });
  }

  /** In the caller's transaction: one message per integration; returns their ids. */
  async enqueue(
    organizationId: string,
    integrationIds: readonly string[],
    message: IntegrationNotice['message'],
  ): Promise<string[]> {
    const ids: string[] = [];
    for (const integrationId of new Set(integrationIds)) {
      ids.push(
        await this.outbox.enqueue('integration.notify', {
          organizationId,
          payload: { integrationId, message },
        }),
      );
    }
    return ids;
  }

  private async attempt(delivery: OutboxDelivery<'integration.notify'>): Promise<void> {
    const organizationId = delivery.organizationId;
    const { integrationId, message } = delivery.payload;
    if (!organizationId || !(await this.repo.organizationLive(organizationId))) {
      this.logger.log(
        { integrationId, messageId: delivery.id },
        'Organization deleted; notification dropped',
      );
      return;
    }
    const row = await this.repo.find(organizationId, integrationId);
    if (!row) {
      this.logger.log({ integrationId, messageId: delivery.id }, 'Integration gone; notification dropped');
      return;
    }
    const result = await this.integrations.notify(row, { ...message, id: `msg_${delivery.id}` });
    if (result.delivered) return;
    const error = `${row.type} integration ${row.id}: ${result.error ?? 'not delivered'}`;
    if (result.retryAfterMs !== undefined) throw new OutboxRetry(error, result.retryAfterMs);
    throw new Error(error);
  }
}
