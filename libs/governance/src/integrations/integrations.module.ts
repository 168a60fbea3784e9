import { Module } from '@nestjs/common';
import { IntegrationNotifier } from './integration-notifier.js';
import { IntegrationsController } from './integrations.controller.js';
import { IntegrationsRepository } from './integrations.repository.js';
import { IntegrationsService } from './integrations.service.js';

/** Notification channels of an organization (e-mail, Slack, signed webhooks), for the alerts to notify. */
@Module({
  controllers: [IntegrationsController],
  providers: [IntegrationsRepository, IntegrationsService, IntegrationNotifier],
  exports: [IntegrationsService, IntegrationsRepository, IntegrationNotifier],
})
export class IntegrationsModule {}
