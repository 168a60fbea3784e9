import { type Context, propagation, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { CompositePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { tracing } from '@opentelemetry/sdk-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlLiteral } from '../../../libs/platform/src/db/inline-sql.js';
import {
  defaultServiceName,
  HeadSampling,
  samplerFromEnv,
  statementForSpan,
  tracingRequested,
  urlAttributesForSpan,
} from './tracing.js';

describe('tracingRequested', () => {
  it('is off without OTEL_* variables, and with those that only describe the service', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: 'api', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(
      false,
    );
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });

  it('is on when an OTLP endpoint is set, for every signal or for traces', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(
      true,
    );
  });

  it('follows OTEL_TRACES_EXPORTER when it is set, as the SDK does', () => {
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'null, otlp' })).toBe(true);
  });

  it('is off when OTEL_SDK_DISABLED is true, whatever else is set', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'otlp' };
    expect(tracingRequested({ ...env, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingRequested({ ...env, OTEL_SDK_DISABLED: 'false' })).toBe(true);
  });
});

describe('defaultServiceName', () => {
  it("is the process's name unless the operator names the service", () => {
    expect(defaultServiceName({}, 'governance-service')).toBe('governance-service');
    expect(defaultServiceName({ OTEL_SERVICE_NAME: 'gov-eu' }, 'governance-service')).toBeUndefined();
    expect(
      defaultServiceName({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=gov' }, 'x'),
    ).toBeUndefined();
    expect(defaultServiceName({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' }, 'x')).toBe('x');
  });
});

describe('statementForSpan', () => {
  it('replaces every inlined string, escaped or not, and keeps the statement', () => {
    const values = ["it's", 'back\\slash', "both \\' and ''", 'plain'];
    const text = `insert into "traces" ("id", "input") select * from unnest(ARRAY[${values.map(sqlLiteral).join(',')}]::text[], ARRAY[E'{"prompt":"my card is 4111"}']::text[]) where status = 'pending' and n = (3)`;
    const shown = statementForSpan(text);
    expect(shown).toBe(
      `insert into "traces" ("id", "input") select * from unnest(ARRAY[?]::text[], ARRAY[?]::text[]) where status = ? and n = (3)`,
    );
    for (const value of [...values, '4111', 'pending']) expect(shown).not.toContain(value);
  });

  it('leaves a statement with parameters as it is', () => {
    const text = 'select "id" from "api_keys" where "key_hash" = $1 and "kind" = $2 limit $3';
    expect(statementForSpan(text)).toBe(text);
  });

  it('does not mistake a word ending in E for the escape-string prefix', () => {
    expect(statementForSpan(`select TYPE'x' || 'it''s' || E'a\\\\' || E'b\\'c'`)).toBe(
      'select TYPE? || ? || ? || ?',
    );
  });
});

describe('urlAttributesForSpan', () => {
  const token = 'Zm9vYmFyYmF6cXV4LXRva2VuLXZhbHVlLTEyMzQ1Njc4OQ';

  it('masks the secrets of a query and of a path as the log lines do', () => {
    expect(urlAttributesForSpan('/api/v1/events/stream?token=s3cr3t&after=5')).toEqual({
      'url.path': '/api/v1/events/stream',
      'url.query': 'token=[Redacted]&after=5',
    });
    expect(urlAttributesForSpan('/api/v1/auth/google/callback?code=c0de&STATE=st4te')).toEqual({
      'url.path': '/api/v1/auth/google/callback',
      'url.query': 'code=[Redacted]&STATE=[Redacted]',
    });
    expect(
      urlAttributesForSpan(`/api/v1/auth/saml/logout/callback?SAMLResponse=PHNhbWw%2B&RelayState=x`),
    ).toEqual({
      'url.path': '/api/v1/auth/saml/logout/callback',
      'url.query': 'SAMLResponse=[Redacted]&RelayState=x',
    });
    expect(urlAttributesForSpan(`/api/v1/team/invites/validate/${token}`)).toEqual({
      'url.path': '/api/v1/team/invites/validate/[Redacted]',
      'url.query': undefined,
    });
  });

  it('keeps what is not a secret, and replaces the query with nothing when there is none', () => {
    expect(urlAttributesForSpan('/api/v1/audit/65f0a1b2c3d4e5f6a7b8c9d0?page=2')).toEqual({
      'url.path': '/api/v1/audit/65f0a1b2c3d4e5f6a7b8c9d0',
      'url.query': 'page=2',
    });
    expect(urlAttributesForSpan('/api/v1/traces?')).toEqual({
      'url.path': '/api/v1/traces',
      'url.query': undefined,
    });
    // An absolute-form target is read as the HTTP instrumentation reads it: its path.
    expect(urlAttributesForSpan(`http://service.example/api/v1/team/invites/${token}/accept`)).toEqual({
      'url.path': '/api/v1/team/invites/[Redacted]/accept',
      'url.query': undefined,
    });
  });
});

describe('urlAttributesForSpan on plain paths (not parsed)', () => {
  /** What the parser makes of a target: the reference the unparsed fast path must equal. */
  const parsed = (target: string) => {
    const url = new URL(target, 'http://localhost');
    return { path: url.pathname, query: url.search.slice(1) };
  };

  it('gives what parsing would, for every target shape it takes unparsed, and parses the rest', () => {
    const token = 'A'.repeat(40);
    const plain = ['/', '/api/v1/traces', '/api/v1/agents/65f0a1b2c3d4e5f6a7b8c9d0/', `/api/v1/x/${token}`, '/a_b~c-d'];
    for (const target of plain) {
      const expected = parsed(target);
      expect(urlAttributesForSpan(target), target).toEqual({
        'url.path': expected.path.replace(/\/[A-Za-z0-9_-]{32,}(?=\/|$)/g, '/[Redacted]'),
        'url.query': undefined,
      });
    }
    // A token written with escapes is read as the router reads it, and masked.
    expect(urlAttributesForSpan(`/api/v1/team/invites/%41${'A'.repeat(39)}/accept`)['url.path']).toBe(
      '/api/v1/team/invites/[Redacted]/accept',
    );
    // Targets the parser changes take the parsed way: dot segments, a double slash, escapes, a query.
    expect(urlAttributesForSpan('/api/v1/../v1/traces')['url.path']).toBe('/api/v1/traces');
    expect(urlAttributesForSpan('/api/v1/..')['url.path']).toBe('/api/');
    expect(urlAttributesForSpan('/api/./v1')['url.path']).toBe('/api/v1');
    expect(urlAttributesForSpan('//evil.example/x')['url.path']).toBe('/x');
    expect(urlAttributesForSpan('/a b')['url.path']).toBe('/a%20b');
    expect(urlAttributesForSpan('/a?token=x')).toEqual({ 'url.path': '/a', 'url.query': 'token=[Redacted]' });
  });
});

describe('samplerFromEnv', () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const parent = (traceFlags: TraceFlags, isRemote: boolean) =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: 'b7ad6b7169203331', traceFlags, isRemote });
  const sampled = (env: NodeJS.ProcessEnv, context = ROOT_CONTEXT) =>
    samplerFromEnv(env, tracing).shouldSample(context, traceId, 'POST', SpanKind.SERVER, {}, []).decision ===
    tracing.SamplingDecision.RECORD_AND_SAMPLED;

  it('samples a request whose remote parent is not sampled as one without a parent', () => {
    const notSampled = parent(TraceFlags.NONE, true);
    expect(sampled({}, notSampled)).toBe(true);
    expect(sampled({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, notSampled)).toBe(true);
    expect(
      sampled({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }, notSampled),
    ).toBe(true);
    expect(
      sampled({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, notSampled),
    ).toBe(false);
    expect(sampled({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, notSampled)).toBe(false);
    expect(sampled({ OTEL_TRACES_SAMPLER: 'no_such_sampler' }, notSampled)).toBe(true);
  });

  it('follows the operator’s root sampler, a sampled remote parent, and a local parent', () => {
    expect(sampled({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe(false);
    expect(sampled({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })).toBe(false);
    // Out of range, the SDK's default ratio: 1.
    expect(sampled({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '7' })).toBe(true);
    expect(sampled({ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, parent(TraceFlags.SAMPLED, true))).toBe(
      true,
    );
    expect(sampled({}, parent(TraceFlags.NONE, false))).toBe(false);
  });
});

describe('HeadSampling', () => {
  // The SDK registers the W3C propagator when it starts; here, for the tests that send a traceparent.
  beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  afterAll(() => propagation.disable());
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const sampledHere = (head: HeadSampling, kind = SpanKind.SERVER) =>
    head.sampler.shouldSample(ROOT_CONTEXT, traceId, 'POST', kind, {}, []).decision ===
    tracing.SamplingDecision.RECORD_AND_SAMPLED;
  const ratio = (arg: string) =>
    new HeadSampling(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: arg }, tracing),
      tracing,
    );

  it('admits the share of requests the configured sampler takes, and samples each admitted server span once', () => {
    const always = new HeadSampling(samplerFromEnv({}, tracing), tracing);
    expect(always.admits({}, 'POST')).toBe(true);
    expect(sampledHere(always)).toBe(true);

    const never = ratio('0');
    expect(never.admits({}, 'POST')).toBe(false);
    // Not admitted: the next server span is left to the configured sampler, which leaves it out.
    expect(sampledHere(never)).toBe(false);

    const tenth = ratio('0.1');
    let admitted = 0;
    for (let i = 0; i < 20_000; i++) {
      if (tenth.admits({}, 'POST')) {
        admitted += 1;
        // The admitted request's server span is sampled without asking the ratio again...
        expect(sampledHere(tenth)).toBe(true);
      }
    }
    expect(admitted / 20_000).toBeGreaterThan(0.08);
    expect(admitted / 20_000).toBeLessThan(0.12);
  });

  it('follows a sampled traceparent, and samples a "not sampled" one as a request without it', () => {
    const sampledParent = { traceparent: `00-${traceId}-b7ad6b7169203331-01` };
    const notSampled = { traceparent: `00-${traceId}-b7ad6b7169203331-00` };
    expect(ratio('0').admits(sampledParent, 'GET')).toBe(true);
    expect(ratio('0').admits(notSampled, 'GET')).toBe(false);
    expect(ratio('1').admits(notSampled, 'GET')).toBe(true);
  });

  it('reads the parent through every configured propagator, not only traceparent', () => {
    const sampledParent = { 'x-test-parent': `${traceId}:b7ad6b7169203331:1` };
    // A propagator of another header (as B3 is), beside the W3C one.
    const other = {
      inject: () => undefined,
      fields: () => ['x-test-parent'],
      extract: (context: Context, carrier: unknown) => {
        const value = (carrier as Record<string, string>)['x-test-parent'];
        if (value === undefined) return context;
        const [id, spanId, flags] = value.split(':');
        return trace.setSpanContext(context, { traceId: id!, spanId: spanId!, traceFlags: Number(flags), isRemote: true });
      },
    };
    propagation.disable();
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), other] }),
    );
    try {
      expect(ratio('0').admits(sampledParent, 'GET')).toBe(true);
      expect(ratio('0').admits({}, 'GET')).toBe(false);
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });

  it('decides a continued trace by its own trace id, the same way every time, as upstream ratio samplers do', () => {
    const half = ratio('0.5');
    const decisions = new Set<boolean>();
    for (let i = 0; i < 50; i++) {
      decisions.add(half.admits({ traceparent: `00-${traceId}-b7ad6b7169203331-00` }, 'GET'));
    }
    expect(decisions.size).toBe(1);
  });

  it('leaves a sampler that is not parent-based (traceidratio) to decide span by span, as the SDK does', () => {
    const plain = new HeadSampling(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, tracing),
      tracing,
    );
    expect(plain.admits({}, 'POST')).toBe(true);
    // Not forced: the server span is judged by the ratio, on its own trace id.
    expect(sampledHere(plain)).toBe(false);
  });

  it('samples spans other than the admitted server span by the configured sampler (jobs, the outbox)', () => {
    const head = ratio('0');
    expect(head.admits({ traceparent: `00-${traceId}-b7ad6b7169203331-01` }, 'GET')).toBe(true);
    expect(sampledHere(head, SpanKind.INTERNAL)).toBe(false);
    expect(sampledHere(head)).toBe(true);
    expect(sampledHere(head)).toBe(false);
  });
});
