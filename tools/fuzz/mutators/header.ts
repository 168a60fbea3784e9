// Headers: X-Svc-Version, credentials, Content-Type, Content-Encoding, oversized headers and the rest.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { credToken, type Mutator } from '../draft.js';
import { isJsonMedia } from '../openapi.js';
import { violatesParam } from '../schema-arbitrary.js';
import { conventions, hasJsonBody, headerParam, refuseIf, setHeader } from './support.js';

export const HEADER_MUTATORS: Mutator[] = [
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
