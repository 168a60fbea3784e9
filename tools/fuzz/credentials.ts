// The fuzzer's own account: an owner session (JWT), a writable workspace key, an agent and its key, a policy, a
// trace and an invitation, so that path parameters can name real objects. Fuzzed requests may revoke any of
// these (logout, revoke-sessions, a deleted agent, a regenerated or narrowed key, a changed password…): `ensure`
// checks each with a cheap request and recreates what no longer works. Also holds the pools of real values.
import type { HttpClient } from './http-client.js';
import type { CredKind } from './hostile.js';
import type { Operation } from './openapi.js';

const API = '/api/v1';
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

  constructor(
    private readonly client: HttpClient,
    private readonly seed: number,
  ) {
    this.password = `Fuzz-${seed}-Secret-9x`;
  }

  value(kind: Exclude<CredKind, 'none'>): string {
    const v = kind === 'jwt' ? this.jwt : kind === 'workspaceKey' ? this.workspaceKey : this.agentKey;
    this.used.set(v, kind === 'jwt' ? 'JWT' : kind === 'workspaceKey' ? 'WORKSPACE_KEY' : 'AGENT_KEY');
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
  }

  async setup(): Promise<void> {
    await this.register();
    await this.createAgent();
    await this.createKey();
    await this.createPolicy();
    await this.seedObjects();
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
        await this.register();
        await this.createAgent();
        await this.createKey();
        await this.createPolicy();
        await this.seedObjects();
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
    return fixed;
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
    merge('email', [this.email]);
    merge('password', [this.password]);
    this.pools = pools;
  }
}
