import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '#identity';
import { EmailRecipientsService } from './email-recipients.service.js';
import { IntegrationNotifier } from './integration-notifier.js';
import { IntegrationConfirmationController, IntegrationsController } from './integrations.controller.js';
import { IntegrationsRepository } from './integrations.repository.js';
import { IntegrationsService } from './integrations.service.js';

/** Notification channels of an organization (e-mail, Slack, signed webhooks), for the alerts to notify. */
@Module({
  imports: [IdentityCoreModule],
  controllers: [IntegrationConfirmationController, IntegrationsController],
  providers: [IntegrationsRepository, IntegrationsService, EmailRecipientsService, IntegrationNotifier],
  exports: [IntegrationsService, IntegrationsRepository, IntegrationNotifier],
})
export class IntegrationsModule {}
