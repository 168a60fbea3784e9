import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { WebhookDeliveryWorker } from './webhook-delivery.worker.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhooks: subscriptions, the delivery worker on the platform outbox, the delivery log. */
@Module({
  imports: [AgentsModule],
  controllers: [WebhooksController],
  providers: [WebhooksRepository, WebhookDeliveryWorker, WebhooksService],
  exports: [WebhookDeliveryWorker, WebhooksRepository],
})
export class WebhooksModule {}
