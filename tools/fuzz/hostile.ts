// Requests for one operation: a valid base request derived from the document, and batches that apply the catalogue
// of hostile mutators (mutators/: body, raw JSON text, path ids and query strings, headers) to it. Credentials and
// real ids are placeholders (`@@cred:…@@`, `@@pool:…@@`) resolved when the request is sent, so that a batch is a
// function of the seed alone and stays valid when the fuzzer has to recreate a credential half-way.
import fc from 'fast-check';
import {
  credToken,
  type CredKind,
  type CredentialHeader,
  type Draft,
  type Mutator,
  type RequestContext,
} from './draft.js';
import { encodeJson } from './json-raw.js';
import type { OpenApiDoc, Operation } from './openapi.js';
import { MUTATORS } from './mutators/index.js';
import { conventions, jsonMedia, pathParams, queryParams, withBody } from './mutators/support.js';
import { nullMemberCasesArb, paramTextArb, poolToken, valueArb, withExample } from './schema-arbitrary.js';

const SKIP_HEADER_PARAMS = new Set([
  'content-type',
  'content-encoding',
  'content-length',
  'authorization',
  'x-api-key',
  'accept',
  'x-svc-version',
]);

function credentialHeaders(ctx: RequestContext): [string, string][] {
  if (ctx.kind === 'none') return [];
  const c = ctx.credentials.find((x) => x.kind === ctx.kind);
  return c ? [[c.header, c.value]] : [];
}

/** The valid request: real ids, declared query parameters, the credential, a valid body. */
export function baseArb(ctx: RequestContext): fc.Arbitrary<Draft> {
  const { op } = ctx;
  const path: Record<string, fc.Arbitrary<string>> = {};
  for (const p of pathParams(op)) {
    const pool = `${op.path}#${p.name}`;
    path[p.name] = ctx.pools.has(pool)
      ? fc.nat(1000).map((n) => poolToken(pool, n))
      : paramTextArb(p.schema, ctx, p.name).map((v) => encodeURIComponent(v) || 'x');
  }
  const query = queryParams(op).map((p) => {
    const pair = paramTextArb(p.schema, ctx, p.name).map(
      (v) => `${encodeURIComponent(p.name)}=${encodeURIComponent(v)}`,
    );
    // A required parameter is always sent (fast-check refuses an option of weight 0).
    return p.required ? pair.map((v): string | undefined => v) : fc.option(pair, { nil: undefined, freq: 2 });
  });
  const extraHeaders = op.parameters
    .filter((p) => p.in === 'header' && !SKIP_HEADER_PARAMS.has(p.name.toLowerCase()))
    .map((p) =>
      fc.option(
        paramTextArb(p.schema, ctx, p.name)
          .filter((v) => v.length > 0 && /^[\x20-\x7e]*$/.test(v))
          .map((v) => [p.name, v] as [string, string]),
        { nil: undefined, freq: p.required ? 0 : 2 },
      ),
    );
  const version =
    ctx.versions.length > 0
      ? fc.option(fc.constantFrom(...ctx.versions), { nil: undefined, freq: 2 })
      : fc.constant(undefined);
  const media = jsonMedia(op);
  const body = media
    ? withExample(valueArb(op.body!.content[media], ctx), ctx.example)
    : fc.constant(undefined);
  return fc
    .record({
      path: fc.record(path),
      query: fc.tuple(...query),
      headers: fc.tuple(...extraHeaders),
      version,
      body,
    })
    .map((r) => {
      const headers: [string, string][] = [...credentialHeaders(ctx)];
      if (r.version) headers.push(['X-Svc-Version', r.version]);
      for (const h of r.headers) if (h) headers.push(h);
      let bytes: Buffer | undefined;
      if (media && r.body !== undefined) {
        headers.push(['Content-Type', 'application/json']);
        bytes = encodeJson(r.body);
      }
      return {
        method: op.method,
        pathParams: r.path,
        query: r.query.filter((q): q is string => q !== undefined),
        headers,
        body: bytes,
        mutator: 'valid',
        note: 'valid request',
      };
    });
}

/** The mutators that apply to this operation and credential kind, in catalogue order. */
export function applicableMutators(ctx: RequestContext): Mutator[] {
  return MUTATORS.filter((m) => m.applies(ctx));
}

/**
 * The null sweep of an operation with a JSON body: one request per member of the body's schema set to null (see
 * `nullMemberCasesArb`), each credential kind the operation accepts (without credentials only when it is public:
 * an anonymous request to a secured route stops at the guard). Not drawn, not counted in the budget: every member
 * is tried on every run, whatever the seed and budget.
 */
export function nullSweepArb(ctx: RequestContext): fc.Arbitrary<Draft[]> {
  const media = jsonMedia(ctx.op);
  if (!media || (ctx.kind === 'none' && ctx.op.schemes.length > 0)) return fc.constant([]);
  // A base request each: one shared by all would repeat its Idempotency-Key, and the second would be a replay.
  return nullMemberCasesArb(ctx.op.body!.content[media], ctx, ctx.example).chain((cases) =>
    fc.tuple(
      ...cases.map((c) =>
        baseArb(ctx).map((base): Draft => ({
          ...withBody(base, encodeJson(c.value)),
          mutator: 'body-null-member',
          note: c.note,
          mustRefuse:
            conventions(ctx) && c.violates
              ? `a body that breaks the documented schema: ${c.violates}`
              : undefined,
        })),
      ),
    ),
  );
}

/**
 * One batch: the first requests use every applicable mutator once (in catalogue order, so each hostile family
 * reaches every operation even with a small budget), then the null sweep (besides the budget), the rest are drawn
 * by weight.
 */
export function batchArb(ctx: RequestContext, size: number): fc.Arbitrary<Draft[]> {
  const muts = applicableMutators(ctx);
  const base = baseArb(ctx);
  const one = (m: Mutator) => base.chain((b) => m.arb(b, ctx));
  const sweep = muts.slice(0, size).map(one);
  const rest = Math.max(0, size - sweep.length);
  const weighted = fc.oneof(...muts.map((m) => ({ arbitrary: one(m), weight: m.weight })));
  return fc
    .tuple(fc.tuple(...sweep), nullSweepArb(ctx), fc.array(weighted, { minLength: rest, maxLength: rest }))
    .map(([a, nulls, b]) => [...a, ...nulls, ...b]);
}

/** FNV-1a: the seed of one batch, from the run's seed, the operation and the credential kind. */
export function batchSeed(seed: number, op: string, kind: string): number {
  let h = 0x811c9dc5 ^ seed;
  for (const ch of `${op}|${kind}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h | 0;
}

/**
 * How each security scheme of the document is presented, and which of the fuzzer's credentials it takes: an HTTP
 * bearer scheme named or described as SCIM takes the SCIM token, any other bearer scheme the session JWT, an API-key
 * header scheme both key kinds the service mints (workspace keys and agent keys).
 */
export function schemeCredentials(doc: OpenApiDoc): {
  kinds: Record<string, Exclude<CredKind, 'none'>[]>;
  headers: CredentialHeader[];
} {
  const kinds: Record<string, Exclude<CredKind, 'none'>[]> = {};
  const headers: CredentialHeader[] = [];
  const add = (h: CredentialHeader) => {
    if (!headers.some((x) => x.kind === h.kind)) headers.push(h);
  };
  for (const [name, scheme] of Object.entries(doc.components?.securitySchemes ?? {})) {
    if (scheme.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') {
      const kind = /scim/i.test(`${name} ${scheme.description ?? ''}`) ? 'scim' : 'jwt';
      kinds[name] = [kind];
      add({ kind, header: 'Authorization', value: `Bearer ${credToken(kind)}` });
    } else if (scheme.type === 'apiKey' && scheme.in === 'header' && scheme.name) {
      kinds[name] = ['workspaceKey', 'agentKey'];
      add({ kind: 'workspaceKey', header: scheme.name, value: credToken('workspaceKey') });
      add({ kind: 'agentKey', header: scheme.name, value: credToken('agentKey') });
    }
  }
  return { kinds, headers };
}

/** The credential kinds an operation is fuzzed with: each its security schemes accept, and none. */
export function credentialKinds(
  op: Operation,
  schemeKinds: Record<string, Exclude<CredKind, 'none'>[]>,
): CredKind[] {
  const kinds = new Set<CredKind>();
  for (const s of op.schemes) for (const k of schemeKinds[s] ?? []) kinds.add(k);
  return [...kinds, 'none'];
}
