import { Controller, Get, Module, type OnModuleInit, Post } from '@nestjs/common';
import { Access, type Actor, ApiKeyResolverRegistry, CurrentActor, Permission } from '#platform';

/**
 * Exercises the API-key seam before the real key kinds exist: a resolver for `svc_test_` keys and routes that
 * accept keys. Key `svc_test_rw_<orgId>` is writable, `svc_test_ro_<orgId>` read-only, `svc_test_agent_<orgId>` an
 * agent key; any other `svc_test_` key is unknown.
 */
@Controller('test-keys')
class TestKeysController {
  @Get('read')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  read(@CurrentActor() actor: Actor) {
    return { credential: actor.credential, organizationId: actor.organizationId };
  }

  @Post('write')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.editAgents })
  write(@CurrentActor() actor: Actor) {
    return { credential: actor.credential };
  }

  @Post('agent-only')
  @Access({ via: ['agentKey'] })
  agentOnly(@CurrentActor() actor: Actor) {
    return { credential: actor.credential, agentId: actor.agentId };
  }
}

@Module({ controllers: [TestKeysController] })
export class TestKeysModule implements OnModuleInit {
  constructor(private readonly registry: ApiKeyResolverRegistry) {}

  onModuleInit(): void {
    this.registry.register({
      prefix: 'svc_test_',
      resolveKey: async (key) => {
        const match = /^svc_test_(rw|ro|agent)_([0-9a-f]{24})$/.exec(key);
        if (!match) return null;
        const [, kind, organizationId] = match;
        const agent = kind === 'agent';
        return {
          type: agent ? 'agent' : 'api_key',
          credential: agent ? 'agentKey' : 'workspaceKey',
          organizationId: organizationId!,
          plan: 'sandbox',
          userId: null,
          email: null,
          role: null,
          keyId: `key-${kind}`,
          agentId: agent ? 'agent-1' : undefined,
          scope: { readOnly: kind === 'ro' },
        } satisfies Actor;
      },
    });
  }
}
