import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

// `null` in an optional member is not "absent": unless the document declares the member nullable (null then clears
// it), it is refused with 400 VALIDATION_ERROR naming the member, before anything is written. `@IsOptional()` let
// null through to the services: NOT NULL columns answered 500 (an organization's name, a scheduled report's name,
// a compliance note's status), a sealed secret threw (an OIDC client secret), a date became 1970 (a report's next
// send), and other members took their defaults. The request DTOs use `@IfPresent()` for such members.

const API = '/api/v1';
const NOTHING = 'f'.repeat(24);

interface Schema {
  $ref?: string;
  type?: string | string[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const declaresNull = (s: Schema): boolean =>
  s.nullable === true ||
  (Array.isArray(s.type) && s.type.includes('null')) ||
  s.type === 'null' ||
  [...(s.oneOf ?? []), ...(s.anyOf ?? [])].some(declaresNull);

/** Asserts a 400 VALIDATION_ERROR whose details name `field`, each with a message. */
function expectRefusedField(res: LightMyRequestResponse, field: string): void {
  const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
  const details = body.details as { field: string; message: string }[];
  expect(details.map((d) => d.field)).toContain(field);
  for (const d of details) expect(typeof d.message).toBe('string');
}

describe('null in optional request members', () => {
  let ctx: TestContext;
  let owner: Registered;
  const ids: Record<string, string> = {};
  const put = (url: string, body: unknown) => ctx.request('PUT', url, { token: owner.token, body });
  const patch = (url: string, body: unknown) => ctx.patch(url, { token: owner.token, body });
  const read = async (url: string) => {
    const res = await ctx.get(url, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  const auditTotal = async () =>
    (await ctx.get(`${API}/audit`, { token: owner.token, query: { limit: '1' } })).json().pagination.total;
  const created = async (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().data;
  };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Null Fields Ltd' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    const post = (url: string, body: unknown) => ctx.post(url, { token: owner.token, body });
    ids.agent = (await created(await post(`${API}/agents`, { name: 'Null agent', description: 'kept' }))).id;
    ids.policy = (
      await created(
        await post(`${API}/policies`, {
          name: 'Null policy',
          outcome: 'flag',
          conditions: [{ field: 'confidence', operator: 'lt', value: 0.1 }],
        }),
      )
    ).id;
    ids.report = (
      await created(
        await post(`${API}/reports/schedule`, {
          name: 'Weekly digest',
          frequency: 'weekly',
          recipients: ['digest@example.com'],
        }),
      )
    ).id;
    ids.fria = (
      await created(
        await post(`${API}/fria`, {
          systemName: 'Credit scoring',
          purpose: 'Consumer loans',
          identifiedRisks: [{ title: 'Bias', likelihood: 'high' }],
        }),
      )
    ).id;
    ids.incident = (
      await created(
        await post(`${API}/incidents`, {
          title: 'Wrong refusals',
          category: 'other',
          awareAt: new Date(ctx.clock.now().getTime() - 3_600_000).toISOString(),
        }),
      )
    ).id;
    ids.alert = (
      await created(
        await post(`${API}/alerts`, {
          name: 'Block rate',
          metric: 'block_rate',
          comparison: 'gt',
          threshold: 0.5,
          windowMinutes: 60,
        }),
      )
    ).id;
    await created(
      await patch(`${API}/compliance/mapping`, {
        framework: 'iso-42001',
        clauseId: '6.1.4',
        status: 'partial',
        evidence: 'FRIA of the credit model',
      }),
    );
    await created(
      await put(`${API}/sso/config`, {
        provider: 'oidc',
        emailDomains: ['null-fields.test'],
        oidc: { issuer: 'https://idp.null-fields.test', clientId: 'governance', clientSecret: 'kept-secret' },
      }),
    );
  });
  afterAll(async () => ctx?.close());

  it('refuses PATCH /organizations/current with a null name: 400 VALIDATION_ERROR naming name, nothing changed', async () => {
    const before = await read(`${API}/organizations/current`);
    const audit = await auditTotal();
    const res = await patch(`${API}/organizations/current`, { name: null });
    const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    expect(body.details).toEqual(expect.arrayContaining([{ field: 'name', message: expect.any(String) }]));
    expect((body.details as { field: string }[]).every((d) => d.field === 'name')).toBe(true);
    // The whole request is refused: a valid member beside the null one is not applied either.
    expectRefusedField(
      await patch(`${API}/organizations/current`, { name: null, traceRetentionDays: 365 }),
      'name',
    );
    expect(await read(`${API}/organizations/current`)).toEqual(before);
    expect(await auditTotal()).toBe(audit);
  });

  it('refuses null in the members that reached a NOT NULL column, a cipher or a date, and changes nothing', async () => {
    const report = `${API}/reports/schedule/${ids.report}`;
    const fria = `${API}/fria/${ids.fria}`;
    const before = {
      report: await read(report),
      fria: await read(fria),
      mapping: await read(`${API}/compliance/mapping?framework=iso-42001`),
      sso: await read(`${API}/sso/config`),
      incident: await read(`${API}/incidents/${ids.incident}`),
    };
    const audit = await auditTotal();

    expectRefusedField(await patch(report, { name: null }), 'name');
    expectRefusedField(await patch(report, { nextSendAt: null }), 'nextSendAt');
    expectRefusedField(await patch(report, { isActive: null }), 'isActive');
    expectRefusedField(
      await patch(`${API}/compliance/mapping`, { framework: 'iso-42001', clauseId: '6.1.4', status: null }),
      'status',
    );
    expectRefusedField(
      await put(`${API}/sso/config`, {
        provider: 'oidc',
        emailDomains: ['null-fields.test'],
        oidc: { issuer: 'https://idp.null-fields.test', clientId: 'governance', clientSecret: null },
      }),
      'oidc.clientSecret',
    );
    expectRefusedField(
      await put(`${API}/sso/config`, {
        provider: 'oidc',
        emailDomains: ['null-fields.test'],
        requireMfaEvenWithSso: null,
        oidc: { issuer: 'https://idp.null-fields.test', clientId: 'governance' },
      }),
      'requireMfaEvenWithSso',
    );
    expectRefusedField(await patch(fria, { systemName: null }), 'systemName');
    expectRefusedField(await patch(fria, { identifiedRisks: null }), 'identifiedRisks');
    expectRefusedField(await patch(fria, { risksIdentified: null }), 'risksIdentified');
    expectRefusedField(
      await patch(fria, { identifiedRisks: [{ title: 'Bias', likelihood: null }] }),
      'identifiedRisks.0.likelihood',
    );
    expectRefusedField(
      await patch(`${API}/incidents/${ids.incident}`, { status: 'reported', reportedAt: null }),
      'reportedAt',
    );

    expect(await read(report)).toEqual(before.report);
    expect(await read(fria)).toEqual(before.fria);
    expect(await read(`${API}/compliance/mapping?framework=iso-42001`)).toEqual(before.mapping);
    expect(await read(`${API}/sso/config`)).toEqual(before.sso);
    expect(await read(`${API}/incidents/${ids.incident}`)).toEqual(before.incident);
    expect(await auditTotal()).toBe(audit);
  });

  it('refuses null where a create body declares no null, rather than creating with the default', async () => {
    const count = async (url: string) =>
      (await ctx.get(url, { token: owner.token })).json().pagination.total as number;
    const lists = [`${API}/incidents`, `${API}/fria`, `${API}/reports/schedule`, `${API}/alerts`];
    const before = await Promise.all(lists.map(count));
    const audit = await auditTotal();
    const post = (url: string, body: unknown) => ctx.post(url, { token: owner.token, body });

    expectRefusedField(
      await post(`${API}/incidents`, {
        title: 'Null description',
        category: 'other',
        description: null,
        awareAt: ctx.clock.now().toISOString(),
      }),
      'description',
    );
    expectRefusedField(
      await post(`${API}/fria`, { systemName: 'Null risks', identifiedRisks: null }),
      'identifiedRisks',
    );
    expectRefusedField(
      await post(`${API}/reports/schedule`, {
        name: 'Null active',
        frequency: 'daily',
        recipients: ['digest@example.com'],
        isActive: null,
      }),
      'isActive',
    );
    expectRefusedField(
      await post(`${API}/alerts`, {
        name: 'Null integrations',
        metric: 'block_rate',
        comparison: 'gt',
        threshold: 0.5,
        windowMinutes: 60,
        integrationIds: null,
      }),
      'integrationIds',
    );
    expectRefusedField(
      await post(`${API}/team/invite`, { email: 'invitee@example.com', role: null }),
      'role',
    );
    expectRefusedField(
      await put(`${API}/compliance/mapping-notes`, { framework: null, notes: {} }),
      'framework',
    );

    expect(await Promise.all(lists.map(count))).toEqual(before);
    expect(await auditTotal()).toBe(audit);
  });

  it('keeps null where the document declares it: it clears the member', async () => {
    const retention = await patch(`${API}/organizations/current`, { traceRetentionDays: 365 });
    expect(retention.json().data.traceRetentionDays).toBe(365);
    const cleared = await patch(`${API}/organizations/current`, { traceRetentionDays: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().data).toMatchObject({ name: 'Null Fields Ltd', traceRetentionDays: null });

    const fria = await patch(`${API}/fria/${ids.fria}`, { purpose: null });
    expect(fria.statusCode, fria.body).toBe(200);
    expect(fria.json().data).toMatchObject({ systemName: 'Credit scoring', purpose: null });

    const agent = await patch(`${API}/agents/${ids.agent}`, { description: null });
    expect(agent.statusCode, agent.body).toBe(200);
    expect(agent.json().data).toMatchObject({ name: 'Null agent', description: null });

    const alert = await patch(`${API}/alerts/${ids.alert}`, { agentId: null });
    expect(alert.statusCode, alert.body).toBe(200);
    expect(alert.json().data.agentId).toBeNull();
  });

  it('documents a `string | null` member as a string or null, never as an object the service refuses', async () => {
    // The route fuzzer sent a string to POST /fria deployerProfileId, which the document typed ['object', 'null']
    // (an undeclared type: the design type of a union is Object), and flagged the 201 as a schema breach.
    const doc = (await ctx.get('/docs/openapi.json')).json() as OpenApi;
    const objectsWithoutShape = Object.entries(doc.components.schemas).flatMap(([name, schema]) =>
      Object.entries(schema.properties ?? {})
        .filter(([, p]) => {
          const types = Array.isArray(p.type) ? p.type : [p.type];
          const shaped = p.properties || (p as { additionalProperties?: unknown }).additionalProperties;
          return types.includes('object') && types.includes('null') && !shaped;
        })
        .map(([member]) => `${name}.${member}`),
    );
    expect(objectsWithoutShape).toEqual([]);
    expect(doc.components.schemas.UpdateFriaDto!.properties!.purpose!.type).toEqual(['string', 'null']);
    const fria = await ctx.post(`${API}/fria`, {
      token: owner.token,
      body: { systemName: 'Typed', deployerProfileId: 'profile-1', purpose: null },
    });
    expect(fria.statusCode, fria.body).toBe(201);
    expect(fria.json().data).toMatchObject({ deployerProfileId: 'profile-1', purpose: null });
  });

  it('answers 400 naming the member for null in every member of every PATCH and PUT body the document does not declare nullable', async () => {
    const doc = (await ctx.get('/docs/openapi.json')).json() as OpenApi;
    const resolve = (s: Schema | undefined): Schema => {
      if (!s) return {};
      if (s.$ref) return resolve(doc.components.schemas[s.$ref.split('/').pop()!]);
      if (s.allOf) return Object.assign({}, ...s.allOf.map(resolve), { ...s, allOf: undefined });
      return s;
    };
    // Real objects where the route has one, so that a check made after the object is read is reached too.
    const real: Record<string, string> = {
      [`${API}/agents/{id}`]: ids.agent!,
      [`${API}/policies/{id}`]: ids.policy!,
      [`${API}/reports/schedule/{id}`]: ids.report!,
      [`${API}/fria/{id}`]: ids.fria!,
      [`${API}/incidents/{id}`]: ids.incident!,
      [`${API}/alerts/{id}`]: ids.alert!,
    };
    const audit = await auditTotal();
    const checked: string[] = [];
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith(`${API}/`)) continue;
      for (const method of ['patch', 'put']) {
        const schema = resolve(item[method]?.requestBody?.content?.['application/json']?.schema);
        const url = path.replace(/\{[^}]+\}/g, () => real[path] ?? NOTHING);
        for (const [member, prop] of Object.entries(schema.properties ?? {})) {
          if (declaresNull(prop)) continue;
          const id = `${method.toUpperCase()} ${path} ${member}`;
          checked.push(id);
          const res = await ctx.request(method.toUpperCase(), url, {
            token: owner.token,
            body: { [member]: null },
          });
          const details = (res.json().details ?? []) as { field: string }[];
          if (
            res.statusCode !== 400 ||
            res.json().code !== 'VALIDATION_ERROR' ||
            !details.some((d) => d.field === member)
          )
            wrong.push(`${id}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toEqual(
      expect.arrayContaining([
        `PATCH ${API}/organizations/current name`,
        `PATCH ${API}/reports/schedule/{id} name`,
        `PATCH ${API}/compliance/mapping status`,
        `PUT ${API}/sso/config oidc`,
        `PATCH ${API}/fria/{id} identifiedRisks`,
      ]),
    );
    expect(checked.length).toBeGreaterThan(50);
    expect(await auditTotal()).toBe(audit);
  });
});
