import { describe, expect, it } from 'vitest';
import { AppError, SCHEMA_VERSIONS } from '#platform';
import { validateIdempotencyKey, validateTraceIngest } from './trace-ingest.validation.js';

const limits = SCHEMA_VERSIONS[0]!.limits;
const body = (over: Record<string, unknown> = {}) => ({
  inputContext: { prompt: 'hi' },
  outputDecision: { action: 'llm_response', text: 'hello' },
  ...over,
});

function fieldsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    expect(e.status).toBe(400);
    expect(e.code).toBe('VALIDATION_ERROR');
    return (e.details ?? []).map((d) => d.field);
  }
  throw new Error('expected a validation error');
}

describe('validateTraceIngest', () => {
  it('returns the body, dropping optional fields sent as null', () => {
    expect(
      validateTraceIngest(
        body({ metadata: null, inputContext: { prompt: 'p', systemPrompt: null } }),
        limits,
      ),
    ).toEqual({
      inputContext: { prompt: 'p' },
      outputDecision: { action: 'llm_response', text: 'hello' },
    });
  });

  it('refuses a body that is not an object', () => {
    expect(fieldsOf(() => validateTraceIngest([], limits))).toEqual([]);
    expect(fieldsOf(() => validateTraceIngest('x', limits))).toEqual([]);
  });

  it('names the required fields when absent', () => {
    expect(fieldsOf(() => validateTraceIngest({}, limits))).toEqual(['inputContext', 'outputDecision']);
    expect(fieldsOf(() => validateTraceIngest({ inputContext: {}, outputDecision: {} }, limits))).toEqual([
      'inputContext.prompt',
      'outputDecision.action',
      'outputDecision.text',
    ]);
  });

  it('measures byte limits on UTF-8 JSON, not characters', () => {
    const wrapper = '{"d":""}'.length;
    const fits = { d: '€'.repeat((10_240 - wrapper) / 3 - 1) };
    expect(() =>
      validateTraceIngest(body({ outputDecision: { action: 'a', text: '', actionObject: fits } }), limits),
    ).not.toThrow();
    const over = { d: '€'.repeat(Math.ceil((10_240 - wrapper) / 3) + 1) };
    expect(
      fieldsOf(() =>
        validateTraceIngest(body({ outputDecision: { action: 'a', text: '', actionObject: over } }), limits),
      ),
    ).toEqual(['outputDecision.actionObject']);
  });

  it('checks confidence range, tool call names and unknown properties', () => {
    expect(fieldsOf(() => validateTraceIngest(body({ confidence: -0.1 }), limits))).toEqual(['confidence']);
    expect(fieldsOf(() => validateTraceIngest(body({ confidence: '0.5' }), limits))).toEqual(['confidence']);
    expect(
      fieldsOf(() =>
        validateTraceIngest(
          body({ outputDecision: { action: 'a', text: '', toolCalls: [{ arguments: {} }] } }),
          limits,
        ),
      ),
    ).toEqual(['outputDecision.toolCalls.0.name']);
    expect(fieldsOf(() => validateTraceIngest(body({ status: 'approved' }), limits))).toEqual(['status']);
  });

  it('applies the limits it is given (another schema version may differ)', () => {
    const strict = { ...limits, inputContext: { ...limits.inputContext, maxPromptLength: 3 } };
    expect(fieldsOf(() => validateTraceIngest(body({ inputContext: { prompt: 'abcd' } }), strict))).toEqual([
      'inputContext.prompt',
    ]);
  });
});

describe('validateIdempotencyKey', () => {
  it('accepts 1 to 255 characters and absence', () => {
    expect(validateIdempotencyKey(undefined)).toBeUndefined();
    expect(validateIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
    expect(() => validateIdempotencyKey('k'.repeat(256))).toThrow(AppError);
    expect(() => validateIdempotencyKey('')).toThrow(AppError);
  });
});
