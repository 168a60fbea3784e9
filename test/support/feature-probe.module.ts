import { Controller, Get, Module } from '@nestjs/common';
import { Access, Permission } from '#platform';

/** Test-only routes guarded by a plan feature, until the feature-gated modules exist. */
@Controller('test-probe')
class FeatureProbeController {
  @Get('sso')
  @Access({ feature: 'sso' })
  sso() {
    return { ok: true };
  }

  @Get('scim-admin')
  @Access({ feature: 'scim', roles: Permission.manageTeam })
  scimAdmin() {
    return { ok: true };
  }
}

@Module({ controllers: [FeatureProbeController] })
export class FeatureProbeModule {}
