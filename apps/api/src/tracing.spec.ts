import { describe, expect, it } from 'vitest';
import { sqlLiteral } from '../../../libs/platform/src/db/inline-sql.js';
import { defaultServiceName, statementForSpan, tracingRequested } from './tracing.js';

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
