import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { type Actor, ApiErrors, CurrentActor, Endpoint, Permission, PLAN_FEATURES, PLANS } from '#platform';
import { PlaceholderDto } from '../auth/dto/email-flows.dto.js';
import { BILLING_DOCS as DOCS } from './billing.docs.js';

export class BillingPlanDto {
  @ApiProperty({ enum: PLANS }) plan: string;
  @ApiProperty({ type: [String], description: 'Features the plan unlocks.', example: ['friaWizard', 'sso'] })
  features: string[];
}

const NOT_CONFIGURED =
  'Payments are not available: no payment provider is configured. Contact the operator to change the plan.';

/**
 * Billing seams: the caller's plan, and the checkout and portal routes, which answer the placeholder
 * shape `{available: false, message}` until a payment provider is configured.
 * See docs/operators.md, "Billing"; test/billing.e2e-spec.ts.
 */
@ApiTags('Billing')
@Controller('billing')
@ApiErrors([401, 403])
export class BillingController {
  @Get('plan')
  @Endpoint({
    summary: 'The organization’s plan',
    description: DOCS.plan,
    access: { roles: Permission.read },
    success: BillingPlanDto,
  })
  plan(@CurrentActor() actor: Actor): BillingPlanDto {
    return { plan: actor.plan, features: [...PLAN_FEATURES[actor.plan]] };
  }

  @Post('checkout')
  @HttpCode(200)
  @Endpoint({
    summary: 'Start a payment checkout (not available)',
    description: DOCS.checkout,
    access: { roles: Permission.billing },
    success: PlaceholderDto,
  })
  checkout(): PlaceholderDto {
    return { available: false, message: NOT_CONFIGURED };
  }

  @Post('portal')
  @HttpCode(200)
  @Endpoint({
    summary: 'Open the customer portal (not available)',
    description: DOCS.portal,
    access: { roles: Permission.billing },
    success: PlaceholderDto,
  })
  portal(): PlaceholderDto {
    return { available: false, message: NOT_CONFIGURED };
  }
}
