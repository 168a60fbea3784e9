// Requests for one operation: a valid base request derived from the document, and the catalogue of hostile
// mutators applied to it (body, raw JSON text, path ids, query strings, headers). Credentials and real ids are
// placeholders (`@@cred:…@@`, `@@pool:…@@`) resolved when the request is sent, so that a batch is a function of
// the seed alone and stays valid when the fuzzer has to recreate a credential half-way.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { Raw, cloneJson, encodeJson } from './json-raw.js';
import { isFreeForm, isJsonMedia, type OpenApiDoc, type Operation } from './openapi.js';
import {
  bodyCaseArb,
  deepJson,
  nullMemberCasesArb,
  paramTextArb,
  poolToken,
  valueArb,
  violatesParam,
  wideObject,
  withExample,
  type GenContext,
} from './schema-arbitrary.js';

/** A credential kind a request is sent with (`scim`: the organization's SCIM bearer token, on /scim/v2). */
export type CredKind = 'jwt' | 'workspaceKey' | 'agentKey' | 'scim' | 'none';

export const credToken = (kind: Exclude<CredKind, 'none'>) => `@@cred:${kind}@@`;

/** How one credential kind is presented: a header and its value (with the credential placeholder). */
export interface CredentialHeader {
  kind: Exclude<CredKind, 'none'>;
  header: string;
  value: string;
}

/** A request before placeholders are resolved. */
export interface Draft {
  method: string;
  /** Path parameter values, already percent-encoded as they go on the wire. */
  pathParams: Record<string, string>;
  /** `name=value` pairs, already encoded; joined with `&`. */
  query: string[];
  headers: [string, string][];
  body?: Buffer;
  mutator: string;
  note: string;
  mustRefuse?: string;
}

export interface RequestContext extends GenContext {
  op: Operation;
  kind: CredKind;
  /** How each credential kind the operation accepts is sent. */
  credentials: CredentialHeader[];
  /** Supported schema versions (from GET /versions). */
  versions: string[];
  /** Wide bodies with this many members (50,000; fewer once they are known to be slow, see main.ts). */
  wideKeys: number;
  /** A body the service accepted for this operation (from the fuzzer's set-up), if any. */
  example?: unknown;
}

export interface Mutator {
  name: string;
  family: 'valid' | 'body' | 'json' | 'path' | 'query' | 'header';
  weight: number;
  applies(ctx: RequestContext): boolean;
  arb(base: Draft, ctx: RequestContext): fc.Arbitrary<Draft>;
}

const jsonMedia = (op: Operation) => Object.keys(op.body?.content ?? {}).find(isJsonMedia);
const hasJsonBody = (ctx: RequestContext) => jsonMedia(ctx.op) !== undefined;
/** Operations whose successes are the standard envelope: the service's JSON conventions apply to them. */
export const followsConventions = (op: Operation) =>
  Object.entries(op.responses).some(([status, r]) => {
    if (!status.startsWith('2')) return false;
    const schema = r.content?.['application/json']?.schema;
    return (
      !schema || JSON.stringify(schema).includes('"success"') || JSON.stringify(schema).includes('Envelope')
    );
  });
const pathParams = (op: Operation) => op.parameters.filter((p) => p.in === 'path');
const queryParams = (op: Operation) => op.parameters.filter((p) => p.in === 'query');
const headerParam = (op: Operation, name: string) =>
  op.parameters.find((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase());
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

const withBody = (base: Draft, body: Buffer, contentType = 'application/json'): Draft => ({
  ...base,
  headers: [
    ...base.headers.filter(([h]) => h.toLowerCase() !== 'content-type'),
    ['Content-Type', contentType],
  ],
  body,
});
const setHeader = (base: Draft, name: string, value: string | string[]): [string, string][] => [
  ...base.headers.filter(([h]) => h.toLowerCase() !== name.toLowerCase()),
  ...(Array.isArray(value) ? value : [value]).map((v) => [name, v] as [string, string]),
];
const refuseIf = (cond: boolean, reason: string) => (cond ? reason : undefined);

/** The JSON body of the base request as a value (for mutators that add to it). */
function baseJson(ctx: RequestContext): fc.Arbitrary<unknown> {
  const media = jsonMedia(ctx.op);
  return media ? withExample(valueArb(ctx.op.body!.content[media], ctx), ctx.example) : fc.constant({});
}

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

const conventions = (ctx: RequestContext) => followsConventions(ctx.op);

export const MUTATORS: Mutator[] = [
  {
    name: 'valid',
    family: 'valid',
    weight: 3,
    applies: () => true,
    arb: (base) => fc.constant(base),
  },
  {
    name: 'body-one-mutation',
    family: 'body',
    weight: 12,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      bodyCaseArb(ctx.op.body!.content[jsonMedia(ctx.op)!], ctx, ctx.example).map((c) => ({
        ...withBody(base, encodeJson(c.value)),
        mutator: 'body-one-mutation',
        note: c.note,
        // A body that breaks the document's schema (a wrong type, a bound exceeded, a required member missing) must
        // be refused too: the document is the contract clients code against.
        mustRefuse: conventions(ctx)
          ? (c.mustRefuse ??
            (c.violates ? `a body that breaks the documented schema: ${c.violates}` : undefined))
          : undefined,
      })),
  },
  {
    name: 'json-malformed',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base) =>
      fc
        .constantFrom(
          ['{"a":', 'truncated'],
          ['{"a":1}}', 'trailing garbage'],
          ["{'a':1}", 'single quotes'],
          ['{"a":1,}', 'a trailing comma'],
          ['{/*c*/"a":1}', 'a comment'],
          ['\ufeff{}', 'a byte-order mark'],
          ['', 'an empty body'],
          ['   ', 'a blank body'],
          ['null', 'null'],
          ['[]', 'an array'],
          ['"text"', 'a string'],
          ['12', 'a number'],
          ['{"a":"b\u0000c"}', 'a raw NUL byte inside a string'],
          ['{"a":"line\nbreak"}', 'a raw line feed inside a string'],
          ['{"a":01}', 'a leading zero'],
          ['{"a":NaN}', 'NaN'],
          ['{"a":"\\x41"}', 'an invalid escape'],
          ['{"a":"\\ud800"}', 'an escaped lone surrogate'],
          ['{"\\ud800":1}', 'an escaped lone surrogate in a key'],
          ['{"a\\u0000":1}', 'an escaped NUL in a key'],
        )
        .map(([text, label]) => ({
          ...withBody(base, Buffer.from(text, 'utf8')),
          mutator: 'json-malformed',
          note: `JSON text: ${label}`,
        })),
  },
  {
    name: 'json-deep',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom(65, 100, 5000),
          fc.constantFrom<'array' | 'object'>('array', 'object'),
          fc.boolean(),
        )
        .map(([json, levels, kind, atRoot]) => ({
          ...withBody(
            base,
            encodeJson(atRoot ? deepJson(levels, kind) : { ...asObject(json), deep: deepJson(levels, kind) }),
          ),
          mutator: 'json-deep',
          note: `${levels} levels of ${kind}s ${atRoot ? 'as the body' : 'under an unknown member'}`,
        })),
  },
  {
    name: 'json-wide',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => ({
        ...withBody(base, encodeJson({ ...asObject(json), ...wideObject(ctx.wideKeys) })),
        mutator: 'json-wide',
        note: `${ctx.wideKeys.toLocaleString('en')} unknown members beside a valid body`,
      })),
  },
  {
    name: 'json-long-array',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => ({
        ...withBody(base, encodeJson({ ...asObject(json), fuzzList: new Array(100_000).fill(0) })),
        mutator: 'json-long-array',
        note: 'a 100,000-element array under an unknown member',
      })),
  },
  {
    name: 'json-proto',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom(
            '{"__proto__":{"isAdmin":true}}',
            '{"constructor":{"prototype":{"isAdmin":true}}}',
            '{"__proto__":null}',
          ),
        )
        .map(([json, extra]) => {
          const text = encodeJson(json).toString('utf8');
          const spliced =
            text.startsWith('{') && text.length > 2 ? `${extra.slice(0, -1)},${text.slice(1)}` : extra;
          return {
            ...withBody(base, Buffer.from(spliced, 'utf8')),
            mutator: 'json-proto',
            note: `prototype keys: ${extra}`,
          };
        }),
  },
  {
    name: 'json-duplicate-keys',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      baseJson(ctx).map((json) => {
        const obj = asObject(json);
        const key = Object.keys(obj)[0] ?? 'name';
        const text = encodeJson(obj).toString('utf8');
        const spliced = `{${JSON.stringify(key)}:12345,${text.slice(1)}`;
        return {
          ...withBody(base, Buffer.from(spliced === '{"name":12345,}' ? '{"name":12345}' : spliced, 'utf8')),
          mutator: 'json-duplicate-keys',
          note: `the member ${key} twice`,
        };
      }),
  },
  {
    name: 'json-overflow-number',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(baseJson(ctx), fc.constantFrom('1e309', '-1e309', '1' + '0'.repeat(400)))
        .map(([json, num]) => {
          // Put the number inside a free-form member of the body when there is one (where no DTO checks it),
          // else as an unknown member.
          const schema = ctx.resolver.resolve(ctx.op.body!.content[jsonMedia(ctx.op)!]);
          const free = Object.entries(schema.properties ?? {}).find(([, s]) =>
            isFreeForm(ctx.resolver.resolve(s)),
          )?.[0];
          const obj = cloneJson(asObject(json));
          let where: string;
          if (isFreeForm(schema)) {
            obj.fuzzNumber = Raw.text(num, num.slice(0, 12));
            where = 'in the free-form body';
          } else if (free) {
            obj[free] = { ...asObject(obj[free]), fuzzNumber: Raw.text(num) };
            where = `in the free-form member ${free}`;
          } else {
            obj.fuzzNumber = Raw.text(num);
            where = 'as an unknown member';
          }
          return {
            ...withBody(base, encodeJson(obj)),
            mutator: 'json-overflow-number',
            note: `${num.length > 12 ? num.slice(0, 6) + '… (401 digits)' : num} ${where}`,
            mustRefuse: refuseIf(
              conventions(ctx),
              `a number that overflows a double in the JSON body: ${num.length > 12 ? num.slice(0, 6) + '… (401 digits)' : num}`,
            ),
          };
        }),
  },
  {
    name: 'json-invalid-utf8',
    family: 'json',
    weight: 2,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .tuple(
          baseJson(ctx),
          fc.constantFrom<[string, string]>(
            ['a\xff\xfeb', 'FF FE'],
            ['\xc0\xaf', 'C0 AF (overlong)'],
            ['\xed\xa0\x80', 'ED A0 80 (surrogate)'],
            ['x\x80', '80 (continuation)'],
          ),
        )
        .map(([json, [bytes, label]]) => {
          // The invalid bytes replace the first string of the body, else go in an unknown member.
          const obj = cloneJson(asObject(json));
          const key = Object.keys(obj).find((k) => typeof obj[k] === 'string') ?? 'fuzzText';
          obj[key] = Raw.text(`"${bytes}"`, label);
          return {
            ...withBody(base, encodeJson(obj)),
            mutator: 'json-invalid-utf8',
            note: `invalid UTF-8 (${label}) in ${key}`,
            mustRefuse: refuseIf(conventions(ctx), `invalid UTF-8 in the JSON body: ${label}`),
          };
        }),
  },
  {
    name: 'json-oversized',
    family: 'json',
    weight: 1,
    applies: hasJsonBody,
    arb: (base) =>
      fc.constantFrom(1024 * 1024 + 1, 2 * 1024 * 1024).map((size) => ({
        ...withBody(base, Buffer.from(JSON.stringify({ fuzz: 'O'.repeat(size) }), 'utf8')),
        mutator: 'json-oversized',
        note: `a body of ${size.toLocaleString('en')}+ bytes (over the 1 MiB limit)`,
      })),
  },
  {
    name: 'unexpected-body',
    family: 'json',
    weight: 1,
    applies: (ctx) => !ctx.op.body,
    arb: (base) =>
      fc
        .constantFrom<[string, string]>(
          ['{"fuzz":1}', 'application/json'],
          ['{"a":', 'application/json'],
          ['a=1', 'application/x-www-form-urlencoded'],
          ['\x00\xff', 'application/octet-stream'],
        )
        .map(([text, ct]) => ({
          ...withBody(base, Buffer.from(text, 'latin1'), ct),
          mutator: 'unexpected-body',
          note: `a ${ct} body on an operation that takes none`,
        })),
  },
  {
    name: 'path-bad-id',
    family: 'path',
    weight: 6,
    applies: (ctx) => pathParams(ctx.op).length > 0,
    arb: (base, ctx) =>
      fc
        .tuple(
          fc.constantFrom(...pathParams(ctx.op)),
          fc.oneof(
            fc.constantFrom(
              '0'.repeat(23),
              'f'.repeat(25),
              'z'.repeat(24),
              'ABCDEF0123456789ABCDEF01',
              '-1',
              '0',
              'null',
              'undefined',
              '%20',
              '.',
              '..',
              '%2e%2e',
              '%2F',
              'a%2Fb',
              '%00',
              'a%00b',
              '%ff',
              '%C0%AF',
              '%E2%80%AE',
              '%',
              '%zz',
              '%u0000',
              '%25',
              'x'.repeat(5000),
              '%F0%9F%98%80',
              '1e309',
              '[object%20Object]',
              '__proto__',
              'constructor',
            ),
            fc.stringMatching(/^[0-9a-f]{24}$/),
          ),
        )
        .map(([p, raw]) => {
          const violation = violatesParam(p.schema, safeDecode(raw), ctx);
          const nul = /%00|%u0000/i.test(raw);
          return {
            ...base,
            pathParams: { ...base.pathParams, [p.name]: raw },
            mutator: 'path-bad-id',
            note: `path parameter ${p.name} = ${raw.length > 60 ? `${raw.slice(0, 10)}… (${raw.length} chars)` : raw}`,
            mustRefuse: nul
              ? 'a NUL character in a path parameter'
              : violation && raw !== '%25' && raw !== '%'
                ? `a path parameter that violates its declared schema: ${p.name} ${violation}`
                : undefined,
          };
        }),
  },
  {
    name: 'query-bad-value',
    family: 'query',
    weight: 4,
    applies: (ctx) => queryParams(ctx.op).length > 0,
    arb: (base, ctx) =>
      fc
        .tuple(
          fc.constantFrom(...queryParams(ctx.op)),
          fc.constantFrom(
            'abc',
            '1e300',
            '-1',
            '0',
            '1.5',
            'NaN',
            'Infinity',
            '',
            '0x10',
            '%201',
            '99999999999999999999',
            '1e309',
            '%00',
            'true',
            '[]',
            '{}',
            'x'.repeat(2000),
            '2026-13-45T99:99:99Z',
            '%ff',
          ),
          fc.boolean(),
        )
        .map(([p, raw, repeat]) => {
          const name = encodeURIComponent(p.name);
          const decoded = safeDecode(raw);
          const others = base.query.filter((q) => !q.startsWith(`${name}=`));
          const query = repeat ? [...others, `${name}=1`, `${name}=${raw}`] : [...others, `${name}=${raw}`];
          const violation = violatesParam(p.schema, repeat ? ['1', decoded] : decoded, ctx);
          return {
            ...base,
            query,
            mutator: 'query-bad-value',
            note: `query ${p.name}=${raw.length > 40 ? raw.slice(0, 10) + '…' : raw}${repeat ? ' (given twice)' : ''}`,
            mustRefuse:
              raw === '%00'
                ? 'a NUL character in the query string'
                : violation
                  ? `a query parameter that violates its declared schema: ${p.name} ${violation}`
                  : undefined,
          };
        }),
  },
  {
    name: 'query-hostile',
    family: 'query',
    weight: 3,
    applies: () => true,
    arb: (base) =>
      fc
        .constantFrom<[string[], string, string | undefined]>(
          [['fuzzUnknown=1'], 'an unknown parameter', undefined],
          [['a=1', 'a=2'], 'an unknown parameter twice', undefined],
          [['page[$gt]=1'], 'bracket syntax', undefined],
          [['__proto__[isAdmin]=true'], 'a prototype key', undefined],
          [['constructor=1'], 'constructor', undefined],
          [['=1&&&=='], 'empty names', undefined],
          [['x=%00'], 'a NUL character', 'a NUL character in the query string'],
          [['x=%ff%fe'], 'invalid UTF-8', undefined],
          [['x=%E2%80%AE%F0%9F%98%80'], 'bidi and astral characters', undefined],
          [['q=' + 'Q'.repeat(20_000)], 'a 20,000-character query string', undefined],
          [Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`), '1,000 parameters', undefined],
        )
        .map(([pairs, label, refuse]) => ({
          ...base,
          query: [...base.query, ...pairs],
          mutator: 'query-hostile',
          note: `query: ${label}`,
          mustRefuse: refuse,
        })),
  },
  {
    name: 'header-version',
    family: 'header',
    weight: 3,
    applies: () => true,
    arb: (base, ctx) =>
      fc
        .tuple(
          fc.constantFrom<string | string[]>(
            '',
            'abc',
            '2026-4-11',
            '2026-02-30',
            '9999-12-31',
            '1970-01-01',
            '0000-00-00',
            '2026-04-11x',
            'latest',
            '2026-04-11, 2026-04-11',
            ['2026-04-11', '2026-04-11'],
            ['', '2026-04-11'],
            'x'.repeat(3000),
          ),
        )
        .map(([value]) => {
          const declared = headerParam(ctx.op, 'X-Svc-Version');
          const values = Array.isArray(value) ? value : [value];
          const joined = values.join(', ').trim();
          const violation = declared ? violatesParam(declared.schema, joined, ctx) : undefined;
          const supported = ctx.versions.includes(joined);
          return {
            ...base,
            headers: setHeader(base, 'X-Svc-Version', value),
            mutator: 'header-version',
            note: `X-Svc-Version: ${values.map((v) => JSON.stringify(v.length > 40 ? v.slice(0, 8) + '…' : v)).join(' and ')}`,
            mustRefuse:
              violation && !supported
                ? `an X-Svc-Version that violates its declared schema: ${violation}`
                : undefined,
          };
        }),
  },
  {
    name: 'header-auth',
    family: 'header',
    weight: 4,
    applies: () => true,
    arb: (base, ctx) => {
      const secured = ctx.op.schemes.length > 0;
      const own = ctx.kind === 'none' ? undefined : ctx.credentials.find((c) => c.kind === ctx.kind);
      const jwt = credToken('jwt');
      // The bearer credential of this request (the SCIM token on /scim/v2), else the session JWT.
      const bearer = own?.header === 'Authorization' ? own.value : `Bearer ${jwt}`;
      const cases: fc.Arbitrary<[[string, string][], string, string | undefined]>[] = [
        fc
          .constantFrom<string>(
            'Bearer',
            'Bearer ',
            'bearer x',
            'Bearer a.b.c',
            'Basic dXNlcjpwYXNz',
            'Token abc',
            'Bearer ' + 'A'.repeat(4000),
            'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
            'Bearer svc_live_' + 'x'.repeat(43),
            'Bearer \xe9\xff',
            'Bearer  ' + jwt + ' junk',
          )
          .map((v) => [
            [['Authorization', v]],
            `Authorization: ${JSON.stringify(v.slice(0, 30))}`,
            undefined,
          ]),
        fc
          .constantFrom(
            'svc_live_',
            'svc_agent_',
            'svc_live_' + 'x'.repeat(43),
            'svc_agent_' + '0'.repeat(43),
            'svc_',
            ' ',
            'x'.repeat(5000),
          )
          .map((v) => [[['X-API-Key', v]], `X-API-Key: ${JSON.stringify(v.slice(0, 30))}`, undefined]),
        // Two Authorization headers: whichever comes first, the request is ambiguous and must be refused.
        fc
          .constantFrom<[string, string][]>(
            [
              ['Authorization', bearer],
              ['Authorization', 'Bearer garbage'],
            ],
            [
              ['Authorization', 'Bearer garbage'],
              ['Authorization', bearer],
            ],
            [
              ['Authorization', bearer],
              ['Authorization', bearer],
            ],
          )
          .map((hs) => [
            hs,
            'two Authorization headers',
            secured ? 'ambiguous credentials: two Authorization headers' : undefined,
          ]),
      ];
      if (own) {
        cases.push(
          fc.constant([
            [
              [own.header, own.value],
              [own.header, own.value],
            ],
            `${own.header} twice`,
            secured ? `ambiguous credentials: two ${own.header} headers` : undefined,
          ]),
        );
        const other = ctx.credentials.filter((c) => c.kind !== own.kind);
        if (other.length > 0)
          cases.push(
            fc
              .constantFrom(...other)
              .map((o) => [[[o.header, o.value]], `the ${o.kind} credential instead`, undefined]),
          );
      }
      return fc.oneof(...cases).map(([hs, label, refuse]) => ({
        ...base,
        headers: [
          ...base.headers.filter(([h]) => !['authorization', 'x-api-key'].includes(h.toLowerCase())),
          ...hs,
        ],
        mutator: 'header-auth',
        note: label,
        mustRefuse: refuse,
      }));
    },
  },
  {
    name: 'header-content-type',
    family: 'header',
    weight: 2,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      fc
        .constantFrom<string | string[]>(
          'application/x-www-form-urlencoded',
          'text/plain',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'multipart/form-data',
          'application/xml',
          'application/jsonx',
          'application/json, text/plain',
          ['application/json', 'text/plain'],
          '',
          'APPLICATION/JSON',
          'application/vnd.fuzz+json',
          '*/*',
        )
        .map((ct) => {
          const values = Array.isArray(ct) ? ct : [ct];
          const declared = Object.keys(ctx.op.body!.content).map((m) => m.toLowerCase());
          const base0 = values[0]!.split(';')[0]!.trim().toLowerCase();
          const accepted = values.length === 1 && (declared.includes(base0) || isJsonMedia(base0));
          return {
            ...base,
            body: base.body ?? Buffer.from('{}'),
            headers: setHeader(base, 'Content-Type', ct),
            mutator: 'header-content-type',
            note: `Content-Type: ${values.map((v) => JSON.stringify(v)).join(' and ')}`,
            mustRefuse: refuseIf(
              conventions(ctx) && !accepted && values.every((v) => v !== '') && !['*/*'].includes(base0),
              `a Content-Type the operation does not declare: ${values.join(' and ')}`,
            ),
          };
        }),
  },
  {
    name: 'header-content-encoding',
    family: 'header',
    weight: 3,
    applies: (ctx) => hasJsonBody(ctx) || ctx.op.method !== 'GET',
    arb: (base, ctx) =>
      fc
        .constantFrom(
          'gzip-plain',
          'gzip-real',
          'deflate-plain',
          'br-plain',
          'identity',
          'gzip, gzip',
          'x-fuzz',
        )
        .map((mode) => {
          const declared = headerParam(ctx.op, 'Content-Encoding') !== undefined;
          const plain = base.body ?? Buffer.from('{}');
          const coding = mode.replace(/-(plain|real)$/, '');
          const body = mode === 'gzip-real' ? gzipSync(plain) : plain;
          const notEncoded = mode !== 'gzip-real' && mode !== 'identity';
          return {
            ...base,
            body,
            headers: setHeader(
              base.body
                ? base
                : { ...base, headers: [...base.headers, ['Content-Type', 'application/json']] },
              'Content-Encoding',
              coding,
            ),
            mutator: 'header-content-encoding',
            note: `Content-Encoding: ${coding} with a ${mode === 'gzip-real' ? 'gzip' : 'plain'} body`,
            mustRefuse: refuseIf(
              conventions(ctx) && !declared && notEncoded && ctx.op.body !== undefined,
              `a Content-Encoding the operation does not declare, on a body not so encoded: ${coding}`,
            ),
          };
        }),
  },
  {
    name: 'header-oversized',
    family: 'header',
    weight: 2,
    applies: () => true,
    arb: (base) =>
      fc
        .constantFrom<[[string, string][], string]>(
          [[['X-Fuzz', 'H'.repeat(20_000)]], 'a 20,000-byte header'],
          [[['X-Fuzz', 'H'.repeat(8_000)]], 'an 8,000-byte header'],
          [Array.from({ length: 300 }, (_, i) => [`X-Fuzz-${i}`, 'h'] as [string, string]), '300 headers'],
          [
            [['Cookie', Array.from({ length: 2000 }, (_, i) => `c${i}=1`).join('; ')]],
            'a cookie header with 2,000 cookies',
          ],
        )
        .map(([hs, label]) => ({
          ...base,
          headers: [...base.headers, ...hs],
          mutator: 'header-oversized',
          note: label,
        })),
  },
  {
    name: 'header-misc',
    family: 'header',
    weight: 2,
    applies: () => true,
    arb: (base, ctx) => {
      const idem = headerParam(ctx.op, 'Idempotency-Key');
      const cases: [string, string, string | undefined][] = [
        ['Accept', 'application/xml', undefined],
        ['Accept', 'text/event-stream', undefined],
        ['Accept-Encoding', 'gzip, br, zstd', undefined],
        ['Origin', 'https://evil.example', undefined],
        ['X-Forwarded-For', '1.1.1.1, \xff, ::1, 999.999.999.999', undefined],
        ['X-Request-Id', 'fuzz\xe9' + 'r'.repeat(500), undefined],
        ['Range', 'bytes=0-1', undefined],
        ['Expect', '100-continue', undefined],
        ['Connection', 'close', undefined],
      ];
      if (idem) {
        for (const v of ['', 'k'.repeat(256), 'k'.repeat(255), 'key \xe9']) {
          const violation = violatesParam(idem.schema, v, ctx);
          cases.push([
            idem.name,
            v,
            violation ? `an ${idem.name} that violates its declared schema: ${violation}` : undefined,
          ]);
        }
      }
      return fc.constantFrom(...cases).map(([name, value, refuse]) => ({
        ...base,
        headers: setHeader(base, name, value),
        mutator: 'header-misc',
        note: `${name}: ${JSON.stringify(value.length > 40 ? value.slice(0, 12) + '…' : value)}`,
        mustRefuse: refuse,
      }));
    },
  },
];

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
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
