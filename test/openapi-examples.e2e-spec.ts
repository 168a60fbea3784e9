import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '#platform';
import { EXAMPLE_IDS } from '../apps/api/src/openapi-examples.js';
import { type Registered, TEST_PASSWORD, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { workspaceKey } from './support/cpi-suite.js';
import { MailCatcher } from './support/mail-catcher.js';
import { ingestFlagged, refundFlagPolicy } from './support/review-suite.js';
import { listRoutes, type RouteInfo } from './support/routes.js';
import { SCIM, scimUser } from './support/scim.js';

/**
 * No DNS is reachable here: the examples' hosts (`*.example`, RFC 2606) resolve to a public address, so that a
 * webhook URL passes the SSRF guard's lookup as it would in a deployment.
 */
vi.mock('node:dns/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = ((host: string, options?: unknown) =>
    host.endsWith('.example')
      ? Promise.resolve(
          (options as { all?: boolean } | undefined)?.all
            ? [{ address: '93.184.215.14', family: 4 }]
            : { address: '93.184.215.14', family: 4 },
        )
      : actual.lookup(host, options as never)) as typeof actual.lookup;
  return { ...actual, lookup, default: { ...actual, lookup } };
});

interface Media {
  example?: unknown;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, Media> };
}

/** How one example is sent: the credential, the path's parameters, and the ids to put in place of EXAMPLE_IDS. */
interface Call {
  token?: string;
  apiKey?: string;
  scimToken?: string;
  params?: Record<string, string>;
}

const sameRoute = (route: RouteInfo, method: string, path: string) =>
  route.method === method.toUpperCase() && route.path.replace(/:([A-Za-z]+)/g, '{$1}') === path;

describe('request body examples of the OpenAPI document', () => {
  let ctx: TestContext;
  let document: { paths: Record<string, Record<string, Operation>> };
  let owner: Registered;
  let agent: TestAgent;
  let scimToken: string;
  let cpiKey: string;
  let mail: MailCatcher;
  /** Real objects of the owner's organization, by the example id they stand for. */
  const real: Record<string, string> = {};
  /** Path parameters of real objects, by operationId. */
  const params: Record<string, Record<string, string>> = {};
  /** Operations sent with a caller of their own (they sign out, delete or need a given password). */
  const callers: Record<string, () => Promise<Call>> = {};

  const ok = (res: LightMyRequestResponse, what: string) => {
    expect(res.statusCode, `${what}: ${res.body}`).toBeLessThan(300);
    return res.json().data;
  };

  beforeAll(async () => {
    mail = await MailCatcher.start();
    ctx = await TestContext.create({ config: { smtpUrl: mail.url } });
    document = (await ctx.get('/docs/openapi.json')).json();
    owner = await ctx.register({ organizationName: 'Examples Ltd' });
    const org = owner.organization.id;
    const token = owner.token;
    await ctx.setPlan(org, 'custom');
    agent = await ctx.newAgent(org, 'Support triage bot');
    await refundFlagPolicy(ctx, org, []);
    const member = await ctx.addMember(org, 'member');
    const promoted = await ctx.addMember(org, 'member');
    const suspended = await ctx.addMember(org, 'member');
    const flagged = await ingestFlagged(ctx, agent);
    const decided = await ingestFlagged(ctx, agent);
    const assigned = await ingestFlagged(ctx, agent);
    const policy = ok(
      await ctx.post('/api/v1/policies', {
        token,
        body: {
          name: 'Flag low confidence',
          outcome: 'flag',
          conditions: [{ field: 'confidence', operator: 'lt', value: 0.2 }],
        },
      }),
      'policy',
    );
    const integration = ok(
      await ctx.post('/api/v1/integrations', {
        token,
        body: { type: 'email', name: 'Owners', config: { recipients: [owner.user.email] } },
      }),
      'integration',
    );
    const webhook = ok(
      await ctx.post('/api/v1/webhooks', {
        token,
        body: { url: 'https://relay.examples.example/hooks', events: ['trace.flagged'] },
      }),
      'webhook',
    );
    const fria = ok(
      await ctx.post('/api/v1/fria', { token, body: { systemName: 'Credit scoring' } }),
      'fria',
    );
    const drafted = ok(await ctx.post('/api/v1/fria', { token, body: { systemName: 'Chat bot' } }), 'fria');
    const incident = ok(
      await ctx.post('/api/v1/incidents', {
        token,
        body: { title: 'Double refunds', category: 'other', awareAt: '2026-04-10T08:30:00Z' },
      }),
      'incident',
    );
    const report = ok(
      await ctx.post('/api/v1/reports/schedule', {
        token,
        body: { name: 'Digest', frequency: 'weekly', recipients: [owner.user.email] },
      }),
      'scheduled report',
    );
    const alert = ok(
      await ctx.post('/api/v1/alerts', {
        token,
        body: { name: 'Blocks', metric: 'block_rate', comparison: 'gt', threshold: 0.5, windowMinutes: 60 },
      }),
      'alert',
    );
    const apiKey = ok(await ctx.post('/api/v1/auth/keys', { token, body: { name: 'Reader' } }), 'api key');
    cpiKey = (await workspaceKey(ctx, owner)).key;
    scimToken = ok(await ctx.post('/api/v1/sso/scim-token', { token }), 'scim token').token;
    const scimUserRes = await ctx.request('POST', `${SCIM}/Users`, {
      payload: JSON.stringify(scimUser('provisioned@examples.example')),
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
    });
    expect(scimUserRes.statusCode, scimUserRes.body).toBe(201);
    // An invitation to an address without an account: accepting it takes the example's name and password.
    const invitee = 'invited@examples.example';
    ok(
      await ctx.post('/api/v1/team/invite', { token, body: { email: invitee, role: 'viewer' } }),
      'invitation',
    );
    const invitationToken = MailCatcher.tokenFrom(await mail.waitFor(invitee), '/invite/');
    // A second session of the owner, for revokeSession (the first one keeps making the requests).
    const second = await ctx.login(owner.user.email);
    const sessions = ok(await ctx.get('/api/v1/auth/sessions', { token: second }), 'sessions') as {
      sessionId: string;
      current: boolean;
    }[];

    Object.assign(real, {
      [EXAMPLE_IDS.agent]: agent.id,
      [EXAMPLE_IDS.trace]: flagged.traceId,
      [EXAMPLE_IDS.reviewItem]: flagged.reviewItemId,
      [EXAMPLE_IDS.policy]: policy.id,
      [EXAMPLE_IDS.integration]: integration.id,
      [EXAMPLE_IDS.organization]: org,
      [EXAMPLE_IDS.session]: sessions.find((s) => s.current)!.sessionId,
      [EXAMPLE_IDS.user]: member.userId,
    });
    Object.assign(params, {
      updateApiKey: { id: apiKey.id },
      acceptInvitation: { token: invitationToken },
      changeMemberRole: { userId: promoted.userId },
      suspendMember: { userId: suspended.userId },
      scimReplaceUser: { id: scimUserRes.json().id },
      scimPatchUser: { id: scimUserRes.json().id },
      scimPatchGroup: { id: 'reviewer' },
      updateAgent: { id: agent.id },
      updatePolicy: { id: policy.id },
      decideReviewItem: { id: decided.reviewItemId },
      assignReviewItem: { id: assigned.reviewItemId },
      updateWebhook: { id: webhook.id },
      rotateWebhookSecret: { id: webhook.id },
      updateIntegration: { id: integration.id },
      updateFria: { id: fria.id },
      transitionFria: { id: drafted.id },
      updateIncident: { id: incident.id },
      updateScheduledReport: { id: report.id },
      updateAlert: { id: alert.id },
    });
    // Callers of their own: the current password is the example's; the organization's name is the example's.
    callers.changePassword = async () => {
      const own = await ctx.register({ password: 'Correct-Horse-9' });
      return { token: own.token };
    };
    callers.deleteCurrentOrganization = async () => {
      const own = await ctx.register({ organizationName: 'Analytical Engines Ltd', password: TEST_PASSWORD });
      return { token: own.token };
    };
  });
  afterAll(async () => {
    await ctx?.close();
    await mail?.stop();
  });

  /** The example with the example ids replaced by real ones. */
  const withRealIds = (example: unknown): unknown =>
    JSON.parse(
      Object.entries(real).reduce((text, [from, to]) => text.replaceAll(from, to), JSON.stringify(example)),
    );

  async function send(
    method: string,
    path: string,
    operation: Operation,
  ): Promise<{ res: LightMyRequestResponse; route: RouteInfo }> {
    const route = listRoutes(ctx.app).find((r) => sameRoute(r, method, path));
    if (!route) throw new Error(`${method} ${path}: no such route`);
    const [mediaType, media] = Object.entries(operation.requestBody!.content).find(
      ([, m]) => m.example !== undefined,
    )!;
    const via = route.access?.via ?? [];
    const call: Call = callers[operation.operationId]
      ? await callers[operation.operationId]!()
      : route.guards.includes('ScimAuthGuard')
        ? { scimToken }
        : via.includes('jwt')
          ? { token: owner.token }
          : via.includes('agentKey')
            ? { apiKey: agent.key }
            : via.includes('workspaceKey')
              ? { apiKey: cpiKey }
              : {};
    const url = path.replace(
      /\{([A-Za-z]+)\}/g,
      (_, name: string) => params[operation.operationId]?.[name] ?? newId(),
    );
    const example = withRealIds(media.example);
    const headers: Record<string, string> = { 'content-type': mediaType };
    if (call.token) headers.authorization = `Bearer ${call.token}`;
    if (call.scimToken) headers.authorization = `Bearer ${call.scimToken}`;
    if (call.apiKey) headers['x-api-key'] = call.apiKey;
    const payload =
      mediaType === 'application/x-www-form-urlencoded'
        ? new URLSearchParams(example as Record<string, string>).toString()
        : JSON.stringify(example);
    return { res: await ctx.request(method.toUpperCase(), url, { payload, headers }), route };
  }

  it('gives every request body an example that its route accepts: never 400 VALIDATION_ERROR, never 5xx', async () => {
    const refused: string[] = [];
    const answers: string[] = [];
    let sent = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.requestBody) continue;
        const examples = Object.values(operation.requestBody.content).filter((m) => m.example !== undefined);
        expect(examples.length, `${operation.operationId} has no example`).toBeGreaterThan(0);
        const { res, route } = await send(method, path, operation);
        sent++;
        if (operation.operationId === 'scimCreateUser' && res.statusCode === 201) {
          // The user the example provisioned is the one the replace and patch examples change.
          params.scimReplaceUser = params.scimPatchUser = { id: res.json().id };
        }
        const body = (() => {
          try {
            return res.json() as Record<string, unknown>;
          } catch {
            return {};
          }
        })();
        const where = `${operation.operationId} (${method.toUpperCase()} ${path})`;
        answers.push(`${where}: ${res.statusCode} ${String(body.code ?? body.scimType ?? '')}`);
        const scimRefusal = path.startsWith('/scim/') && res.statusCode === 400;
        const otlpRefusal =
          operation.operationId === 'exportOtlpTraces' &&
          (res.statusCode !== 200 || (body.partialSuccess as { rejectedSpans?: number })?.rejectedSpans);
        // A route that needs a credential got past it: the example reached the route's own checks.
        const locked = (route.access?.via?.length ?? 0) > 0 || route.guards.includes('ScimAuthGuard');
        const turnedAway = locked && (res.statusCode === 401 || res.statusCode === 403);
        if (
          res.statusCode >= 500 ||
          body.code === 'VALIDATION_ERROR' ||
          scimRefusal ||
          otlpRefusal ||
          turnedAway
        ) {
          refused.push(`${where}: ${res.statusCode} ${res.body}`);
        }
      }
    }
    expect(refused, answers.join('\n')).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(64);
    // What each example got, in the failure output of the assertion below should the count change.
    // Every example was answered (the list shows each status and code when an assertion above fails).
    expect(answers, answers.join('\n')).toHaveLength(sent);
  }, 120_000);
});
