// The fuzzer's own account: an owner session (JWT), a writable workspace key, an agent and its key, a policy, a
// trace, an invitation, a scheduled report, an alert, an incident and a FRIA, so that path parameters can name real
// objects. Fuzzed requests may revoke any of these (logout, revoke-sessions, a deleted agent, a regenerated or
// narrowed key, a changed password…): `ensure` checks each with a cheap request and recreates what no longer
// works. Also holds the pools of real values.
import type { HttpClient } from './http-client.js';
import type { CredKind } from './draft.js';
import type { Operation } from './openapi.js';
import { poolToken } from './schema-arbitrary.js';

const poolTokenOf = (pool: string) => poolToken(pool, 0);

const API = '/api/v1';
const SCIM = '/scim/v2';
const SCIM_PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SCIM_USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
/** The SCIM groups: the organization's four fixed role buckets. */
export const SCIM_GROUPS = ['owner', 'admin', 'member', 'reviewer'];
/**
 * SCIM requests (with any credential or none) allowed per token and per client IP before the fuzzer moves to a
 * new token and a new source address: the service allows 600 per 15 minutes for each.
 */
export const SCIM_QUOTA = 500;

/** An operation behind the SCIM token (counted against the SCIM limits even when sent without it). */
export const isScimGuarded = (op: Operation) => op.path.startsWith(`${SCIM}/`) && op.schemes.length > 0;

/** The `id`s of a SCIM ListResponse's `Resources`. */
export function scimIds(body: unknown): string[] {
  const resources = obj(body).Resources;
  return Array.isArray(resources)
    ? resources.map((r) => obj(r).id).filter((id): id is string => typeof id === 'string' && id !== '')
    : [];
}
/** Placeholder for the id of the fuzzer's current agent, resolved when a request is sent. */
export const SELF_AGENT_ID = '@@self:agentId@@';
const HEX24 = /^[0-9a-f]{24}$/;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const dataOf = (body: unknown): unknown => obj(body).data;

/**
 * The longest string under `value` that starts with `prefix`: API keys come back under varying names, beside a
 * shorter display prefix (`keyPrefix: "svc_agent_AbCd"`).
 */
export function findPrefixed(value: unknown, prefix: string): string | undefined {
  let best: string | undefined;
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      if (v.startsWith(prefix) && (!best || v.length > best.length)) best = v;
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return best;
}

/** `agents` → `agentId`, `policies` → `policyId`, `invites` → `inviteId`. */
export function idPoolName(segment: string): string {
  const singular = segment.endsWith('ies')
    ? `${segment.slice(0, -3)}y`
    : segment.endsWith('s')
      ? segment.slice(0, -1)
      : segment;
  return `${singular.replace(/[^A-Za-z0-9]/g, '')}Id`;
}

/** The path of the collection a path parameter indexes: `/api/v1/agents/{id}/regenerate-key` → `/api/v1/agents`. */
export function collectionOf(path: string, param: string): string {
  const at = path.indexOf(`{${param}}`);
  return path.slice(0, at).replace(/\/$/, '');
}

/** Values to pool from one list answer: ids under the collection's name, and every `…Id` member. */
export function poolValues(collectionPath: string, data: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string, v: unknown) => {
    if (typeof v !== 'string' || !HEX24.test(v)) return;
    const list = out.get(name) ?? [];
    if (!list.includes(v)) list.push(v);
    out.set(name, list);
  };
  const items = Array.isArray(data) ? data : data && typeof data === 'object' ? [data] : [];
  const last = collectionPath.split('/').filter(Boolean).pop() ?? '';
  for (const item of items) {
    const o = obj(item);
    if ('id' in o) add(idPoolName(last), o.id);
    for (const [k, v] of Object.entries(o)) if (k.endsWith('Id')) add(k, v);
  }
  return out;
}

export class Credentials {
  jwt = '';
  workspaceKey = '';
  workspaceKeyId = '';
  agentKey = '';
  agentId = '';
  policyId = '';
  /** The organization's SCIM token (`scim_` and 48 hex characters). */
  scim = '';
  /** A user created through SCIM (not the owner): PATCH and group membership examples name it. */
  scimUserId = '';
  email = '';
  readonly password: string;
  /** Real values by pool name; path pools are named `<operation path>#<parameter>`. */
  pools = new Map<string, string[]>();
  /** Bodies the service accepted, by operation (`POST /api/v1/agents`): known-good starting points for mutations. */
  readonly examples = new Map<string, unknown>();
  /** Every credential value sent (recreated ones too), with the shell variable reproducers print it as. */
  private readonly used = new Map<string, string>();
  /** How many times each credential had to be recreated. */
  readonly repairs: Record<string, number> = {};
  private accounts = 0;
  /** SCIM requests sent with the current token and source address (see SCIM_QUOTA). */
  private scimSpent = 0;
  private sourceAddresses = 0;

  constructor(
    private readonly client: HttpClient,
    private readonly seed: number,
  ) {
    this.password = `Fuzz-${seed}-Secret-9x`;
  }

  value(kind: Exclude<CredKind, 'none'>): string {
    const [v, name] = {
      jwt: [this.jwt, 'JWT'],
      workspaceKey: [this.workspaceKey, 'WORKSPACE_KEY'],
      agentKey: [this.agentKey, 'AGENT_KEY'],
      scim: [this.scim, 'SCIM_TOKEN'],
    }[kind];
    this.used.set(v, name);
    return v;
  }

  /** Every credential sent, for reproducers that print them as shell variables. */
  secrets(): Map<string, string> {
    return new Map([...this.used].filter(([v]) => v));
  }

  private bearer(): [string, string][] {
    return [['Authorization', `Bearer ${this.jwt}`]];
  }

  private count(what: string): void {
    this.repairs[what] = (this.repairs[what] ?? 0) + 1;
  }

  /** A set-up request that must succeed; its body becomes the operation's example. */
  private async must(
    method: string,
    path: string,
    body: unknown,
    headers: [string, string][] = this.bearer(),
    template = path,
  ): Promise<Json> {
    const r = await this.client.json(method, path, body, headers);
    if (r.status < 200 || r.status > 299)
      throw new Error(
        `fuzzer set-up: ${method} ${path} answered ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`,
      );
    this.examples.set(`${method} ${template}`, body);
    return obj(dataOf(r.body));
  }

  private async register(): Promise<void> {
    this.accounts++;
    this.email = `fuzz-${process.pid}-${this.seed}-${this.accounts}@example.com`;
    const data = await this.must(
      'POST',
      `${API}/auth/register`,
      {
        name: 'Fuzz Owner',
        email: this.email,
        password: this.password,
        organizationName: `Fuzz ${this.accounts}`,
      },
      [],
    );
    if (typeof data.token !== 'string') throw new Error('fuzzer set-up: register answered no token');
    this.jwt = data.token;
  }

  private async login(): Promise<boolean> {
    const body = { email: this.email, password: this.password };
    const r = await this.client.json('POST', `${API}/auth/login`, body);
    const token = obj(dataOf(r.body)).token;
    if (r.status === 200 && typeof token === 'string') {
      this.examples.set(`POST ${API}/auth/login`, body);
      this.jwt = token;
      return true;
    }
    return false;
  }

  private async createAgent(): Promise<void> {
    const data = await this.must('POST', `${API}/agents`, {
      name: 'Fuzz agent',
      description: 'created by the route fuzzer',
    });
    const key = findPrefixed(data, 'svc_agent_');
    if (!key || typeof data.id !== 'string') throw new Error('fuzzer set-up: the new agent has no key');
    this.agentKey = key;
    this.agentId = data.id;
  }

  private async createKey(): Promise<void> {
    const data = await this.must('POST', `${API}/auth/keys`, { name: 'Fuzz workspace key' });
    const key = findPrefixed(data, 'svc_live_');
    if (!key || typeof data.id !== 'string')
      throw new Error('fuzzer set-up: the new workspace key has no key');
    this.workspaceKey = key;
    this.workspaceKeyId = data.id;
  }

  private async createPolicy(): Promise<void> {
    const data = await this.must('POST', `${API}/policies`, {
      name: 'Fuzz policy',
      description: 'created by the route fuzzer',
      outcome: 'flag',
      match: 'any',
      priority: 500,
      conditions: [
        { field: 'outputDecision.text', operator: 'contains', value: 'fuzz-flag-me' },
        { field: 'confidence', operator: 'lt', value: 0.01 },
      ],
    });
    if (typeof data.id !== 'string') throw new Error('fuzzer set-up: the new policy has no id');
    this.policyId = data.id;
  }

  /** Objects that exist so that path parameters can name them (a trace, an invitation), and a few more examples. */
  private async seedObjects(): Promise<void> {
    const trace = {
      inputContext: { prompt: 'fuzz seed prompt', context: { ticket: 42 } },
      outputDecision: { action: 'answer', text: 'fuzz seed answer' },
      metadata: { source: 'fuzzer' },
      // Resolved when a request is sent: the agent of the current agent key (valid with either key kind).
      agentId: SELF_AGENT_ID,
    };
    await this.must('POST', `${API}/traces`, { ...trace, agentId: this.agentId }, [
      ['X-API-Key', this.agentKey],
    ]);
    this.examples.set(`POST ${API}/traces`, trace);
    await this.must('POST', `${API}/team/invite`, {
      email: `invitee-${process.pid}-${this.accounts}@example.com`,
      role: 'viewer',
    });
    await this.must('PATCH', `${API}/auth/me/preferences`, {
      theme: 'dark',
      notifications: { weeklyDigest: false },
    });
    await this.must(
      'PATCH',
      `${API}/agents/${this.agentId}`,
      { description: 'seeded' },
      this.bearer(),
      `${API}/agents/{id}`,
    );
    this.examples.set(`PATCH ${API}/policies/{id}`, { priority: 400, isActive: true });
    await this.seedUpdatables();
  }

  /** A set-up request that may fail (a plan without the feature, see FUZZ_PLAN); its body, if accepted, is an example. */
  private async attempt(method: string, path: string, body: unknown): Promise<void> {
    const r = await this.client.json(method, path, body, this.bearer());
    if (r.status >= 200 && r.status < 300) this.examples.set(`${method} ${path}`, body);
    else
      console.log(
        `fuzz: set-up: ${method} ${path} answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)} (no example)`,
      );
  }

  /**
   * Objects behind update routes whose collections start empty (a path id of nothing is a 404 before any body is
   * read), and bodies the service accepts where the schema cannot say what a valid required member is (a clause of
   * the catalogue, an IdP): the null sweep then reaches these handlers rather than a refusal of another member.
   */
  private async seedUpdatables(): Promise<void> {
    await this.attempt('POST', `${API}/reports/schedule`, {
      name: 'Fuzz digest',
      frequency: 'weekly',
      recipients: ['fuzz-digest@example.com'],
    });
    await this.attempt('POST', `${API}/alerts`, {
      name: 'Fuzz alert',
      metric: 'block_rate',
      comparison: 'gt',
      threshold: 0.5,
      windowMinutes: 60,
    });
    await this.attempt('POST', `${API}/incidents`, {
      title: 'Fuzz incident',
      category: 'other',
      awareAt: new Date(Date.now() - 3_600_000).toISOString(),
    });
    await this.attempt('POST', `${API}/fria`, { systemName: 'Fuzz system', purpose: 'fuzzing' });
    await this.attempt('PATCH', `${API}/compliance/mapping`, {
      framework: 'iso-42001',
      clauseId: '6.1.4',
      status: 'partial',
      evidence: 'fuzz evidence',
    });
    await this.attempt('PUT', `${API}/sso/config`, {
      provider: 'oidc',
      emailDomains: [`fuzz-${process.pid}-${this.accounts}.test`],
      oidc: { issuer: 'https://idp.example.com', clientId: 'fuzz-client', clientSecret: 'fuzz-secret' },
    });
  }

  private scimBearer(): [string, string][] {
    return [['Authorization', `Bearer ${this.scim}`]];
  }

  /** Mints a new SCIM token (which revokes the previous one). Needs a plan with `scim` (see service.ts). */
  private async mintScim(): Promise<void> {
    const data = await this.must('POST', `${API}/sso/scim-token`, undefined);
    if (typeof data.token !== 'string' || !data.token.startsWith('scim_'))
      throw new Error('fuzzer set-up: POST /api/v1/sso/scim-token answered no token');
    this.scim = data.token;
    this.scimSpent = 0;
  }

  /** A SCIM request of the set-up; answers the status and parsed body. */
  private async scimJson(method: string, path: string, body?: unknown) {
    await this.spendScim();
    return this.client.json(method, path, body, this.scimBearer());
  }

  /**
   * A user provisioned through SCIM, and examples the service accepted for the SCIM writes (each is tried once
   * here; only what succeeded becomes an example).
   */
  private async seedScim(): Promise<void> {
    const user = {
      schemas: [SCIM_USER_SCHEMA],
      userName: `scim-${process.pid}-${this.seed}-${this.accounts}@example.com`,
      name: { givenName: 'Fuzz', familyName: 'Provisioned' },
      displayName: 'Fuzz Provisioned',
      emails: [{ value: `scim-${process.pid}-${this.seed}-${this.accounts}@example.com`, primary: true }],
      active: true,
    };
    const created = await this.scimJson('POST', `${SCIM}/Users`, user);
    const id = obj(created.body).id;
    if (created.status !== 201 || typeof id !== 'string')
      throw new Error(
        `fuzzer set-up: POST ${SCIM}/Users answered ${created.status} ${JSON.stringify(created.body).slice(0, 300)}`,
      );
    this.scimUserId = id;
    this.examples.set(`POST ${SCIM}/Users`, { ...user, userName: `other-${user.userName}` });
    const tryExample = async (method: string, template: string, body: unknown) => {
      const path = template.replace('{id}', template.includes('Groups') ? 'member' : id);
      const sent: unknown = JSON.parse(JSON.stringify(body).replaceAll(poolTokenOf('scimUserId'), id));
      const r = await this.scimJson(method, path, sent);
      if (r.status >= 200 && r.status < 300) this.examples.set(`${method} ${template}`, body);
    };
    await tryExample('PATCH', `${SCIM}/Users/{id}`, {
      schemas: [SCIM_PATCH_OP],
      Operations: [{ op: 'replace', path: 'displayName', value: 'Fuzz Patched' }],
    });
    await tryExample('PUT', `${SCIM}/Users/{id}`, user);
    await tryExample('PATCH', `${SCIM}/Groups/{id}`, {
      schemas: [SCIM_PATCH_OP],
      // Resolved when the request is sent: a user provisioned through SCIM, never the fuzzer's owner.
      Operations: [{ op: 'add', path: 'members', value: [{ value: poolTokenOf('scimUserId') }] }],
    });
  }

  /** A new account with everything the fuzzer needs. */
  private async createAll(): Promise<void> {
    await this.register();
    await this.createAgent();
    await this.createKey();
    await this.createPolicy();
    await this.seedObjects();
    await this.mintScim();
    await this.seedScim();
  }

  async setup(): Promise<void> {
    await this.createAll();
  }

  /**
   * Counts one request to a SCIM route; before the service's per-token or per-IP limit would refuse it, moves to a
   * new source address (127.0.0.2, .3, …) and a new token, so that the handlers stay reachable for the whole run.
   */
  async spendScim(): Promise<void> {
    if (++this.scimSpent <= SCIM_QUOTA) return;
    this.sourceAddresses++;
    this.client.localAddress = `127.0.0.${2 + (this.sourceAddresses % 250)}`;
    await this.mintScim();
    this.count('scim (quota)');
    this.scimSpent = 1;
  }

  private async ok(path: string, headers: [string, string][]): Promise<boolean> {
    const r = await this.client.send({ method: 'GET', path, headers });
    return r.response?.status === 200;
  }

  /** Checks every credential and recreates those that stopped working; returns what was recreated. */
  async ensure(): Promise<string[]> {
    const fixed: string[] = [];
    const me = await this.client.json('GET', `${API}/auth/me`, undefined, this.bearer());
    if (me.status !== 200 || obj(dataOf(me.body)).role !== 'owner') {
      if (me.status === 200 || !(await this.login()) || !(await this.ownerNow())) {
        // The password changed, or the account lost its owner role: start a new account and organization.
        await this.createAll();
        this.count('account');
        return ['account'];
      }
      this.count('jwt');
      fixed.push('jwt');
    }
    const keys = await this.client.json('GET', `${API}/auth/keys`, undefined, this.bearer());
    const mine = Array.isArray(dataOf(keys.body))
      ? (dataOf(keys.body) as unknown[]).map(obj).find((k) => k.id === this.workspaceKeyId)
      : undefined;
    const scope = obj(mine?.scope);
    const intact =
      mine && scope.readOnly !== true && (scope.agentIds === null || scope.agentIds === undefined);
    if (!intact || !(await this.ok(`${API}/agents`, [['X-API-Key', this.workspaceKey]]))) {
      await this.createKey();
      this.count('workspaceKey');
      fixed.push('workspaceKey');
    }
    if (!(await this.ok(`${API}/agents/${this.agentId}`, [['X-API-Key', this.agentKey]]))) {
      await this.createAgent();
      this.count('agentKey');
      fixed.push('agentKey');
    }
    if (!(await this.ok(`${API}/policies/${this.policyId}`, this.bearer()))) {
      await this.createPolicy();
      this.count('policy');
      fixed.push('policy');
    }
    // A fuzzed POST or DELETE /api/v1/sso/scim-token rotates or revokes the token.
    await this.spendScim();
    const scimList = await this.client.send({
      method: 'GET',
      path: `${SCIM}/Users?count=0`,
      headers: this.scimBearer(),
    });
    if (scimList.response?.status !== 200) {
      await this.mintScim();
      this.count('scim');
      fixed.push('scim');
    }
    return fixed;
  }

  /**
   * SCIM ids: users from GET /scim/v2/Users (with the SCIM token; `scimUserId` holds those that are not the
   * fuzzer's owner), the four role buckets for groups, and the ids of the public ResourceTypes and Schemas.
   */
  private async scimPools(ops: Operation[], merge: (name: string, values: string[]) => void): Promise<void> {
    const scimOps = ops.filter((o) => o.path.startsWith(`${SCIM}/`) && o.path.includes('{id}'));
    if (scimOps.length === 0) return;
    const users = await this.scimJson('GET', `${SCIM}/Users?count=100`);
    const all = users.status === 200 ? scimIds(users.body) : [];
    const me = await this.client.json('GET', `${API}/auth/me`, undefined, this.bearer());
    const myId = obj(dataOf(me.body)).id;
    const others = all.filter((id) => id !== myId);
    merge('scimUserId', others.length > 0 ? others : this.scimUserId ? [this.scimUserId] : []);
    const publicIds = new Map<string, string[]>();
    for (const collection of ['ResourceTypes', 'Schemas']) {
      const r = await this.client.json('GET', `${SCIM}/${collection}`);
      publicIds.set(collection, r.status === 200 ? scimIds(r.body) : []);
    }
    for (const op of scimOps) {
      const collection = op.path.slice(SCIM.length + 1).split('/')[0]!;
      const values =
        collection === 'Users'
          ? // Provisioned users first: the owner comes last, so most requests leave the fuzzer's account alone.
            [...others, ...all.filter((id) => id === myId)]
          : collection === 'Groups'
            ? SCIM_GROUPS
            : (publicIds.get(collection) ?? []);
      if (values.length > 0) merge(`${op.path}#id`, values);
    }
  }

  private async ownerNow(): Promise<boolean> {
    const me = await this.client.json('GET', `${API}/auth/me`, undefined, this.bearer());
    return me.status === 200 && obj(dataOf(me.body)).role === 'owner';
  }

  /**
   * Refreshes the pools of real values: for each path parameter, the ids listed by the GET of its collection;
   * for body fields, every `…Id` seen in those lists; and the fuzzer's own e-mail and password.
   */
  async refreshPools(ops: Operation[]): Promise<void> {
    const pools = new Map<string, string[]>();
    const merge = (name: string, values: string[]) => {
      const list = pools.get(name) ?? [];
      for (const v of values) if (!list.includes(v)) list.push(v);
      pools.set(name, list);
    };
    const lists = new Map<string, unknown>();
    const fetchList = async (path: string) => {
      if (!lists.has(path)) {
        const r = await this.client.json('GET', path, undefined, this.bearer());
        lists.set(path, r.status === 200 ? dataOf(r.body) : undefined);
      }
      return lists.get(path);
    };
    const gets = new Set(ops.filter((o) => o.method === 'GET' && !o.path.includes('{')).map((o) => o.path));
    for (const op of ops) {
      for (const p of op.parameters.filter((x) => x.in === 'path')) {
        const collection = collectionOf(op.path, p.name);
        if (!gets.has(collection)) continue;
        const data = await fetchList(collection);
        const found = poolValues(collection, data);
        const values =
          p.name === 'id' ? found.get(idPoolName(collection.split('/').pop() ?? '')) : found.get(p.name);
        if (values && values.length > 0) merge(`${op.path}#${p.name}`, values);
      }
    }
    for (const path of gets) {
      const op = ops.find((o) => o.method === 'GET' && o.path === path);
      if (op?.parameters.some((p) => p.required && p.in !== 'header')) continue;
      const data = await fetchList(path);
      for (const [name, values] of poolValues(path, data)) merge(name, values);
    }
    await this.scimPools(ops, merge);
    merge('email', [this.email]);
    merge('password', [this.password]);
    this.pools = pools;
  }
}
