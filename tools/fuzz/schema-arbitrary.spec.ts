import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Raw, encodeJson, hasRaw } from './json-raw.js';
import { SchemaResolver, isNullable, schemaTypes, type JsonSchema, type OpenApiDoc } from './openapi.js';
import {
  acceptsNull,
  bodyCaseArb,
  locations,
  nullMemberCasesArb,
  poolToken,
  valueArb,
  violatesParam,
  wrongTypeValues,
  type GenContext,
} from './schema-arbitrary.js';

// A document with every construct the converter resolves: $ref, allOf, oneOf, nullable and type arrays, enums,
// formats, string/number/array bounds, required members and additionalProperties.
const doc: OpenApiDoc = {
  paths: {},
  components: {
    schemas: {
      Scope: {
        type: 'object',
        properties: {
          agentIds: {
            type: ['array', 'null'],
            items: { type: 'string', pattern: '^[0-9a-f]{24}$' },
            minItems: 1,
            maxItems: 3,
          },
          readOnly: { type: 'boolean' },
        },
      },
      Condition: {
        type: 'object',
        properties: {
          field: { type: 'string', example: 'outputDecision.text' },
          operator: { type: 'string', enum: ['equals', 'gt'] },
          value: {
            oneOf: [
              { type: 'string' },
              { type: 'number' },
              { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
            ],
          },
        },
        required: ['field', 'operator'],
      },
      Body: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 20 },
          email: { type: 'string', format: 'email' },
          description: { type: ['string', 'null'], maxLength: 50 },
          legacy: { type: 'string', nullable: true },
          priority: { type: 'integer', minimum: 0, maximum: 10 },
          ratio: { type: 'number', minimum: 0, maximum: 1 },
          outcome: { type: 'string', enum: ['block', 'flag'] },
          when: { type: 'string', format: 'date-time' },
          scope: { allOf: [{ $ref: '#/components/schemas/Scope' }], description: 'scope' },
          conditions: { type: 'array', items: { $ref: '#/components/schemas/Condition' }, maxItems: 4 },
          metadata: { type: 'object', additionalProperties: true },
          counts: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
          agentId: { type: 'string' },
        },
        required: ['name', 'outcome'],
      },
    },
  },
};
const resolver = new SchemaResolver(doc);
const ctx: GenContext = { resolver, pools: new Set() };
const BODY: JsonSchema = { $ref: '#/components/schemas/Body' };

/** A full validator for the subset of JSON Schema above (what "valid" means in these tests). */
function conforms(schema: JsonSchema | undefined, value: unknown): boolean {
  const s = resolver.resolve(schema);
  if (value instanceof Raw || hasRaw(value)) return false;
  if (s.enum) return s.enum.includes(value);
  if (s.oneOf) return s.oneOf.some((b) => conforms(b, value));
  const types = schemaTypes(s);
  if (value === null) return isNullable(s);
  if (!types) return true;
  if (typeof value === 'string') {
    if (!types.includes('string')) return false;
    const n = [...value].length;
    if (s.minLength !== undefined && n < s.minLength) return false;
    if (s.maxLength !== undefined && n > s.maxLength) return false;
    if (s.pattern && !new RegExp(s.pattern).test(value)) return false;
    if (s.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(value)) return false;
    if (s.format === 'date-time' && Number.isNaN(Date.parse(value))) return false;
    return true;
  }
  if (typeof value === 'number') {
    if (!types.includes('number') && !(types.includes('integer') && Number.isInteger(value))) return false;
    if (!Number.isFinite(value)) return false;
    if (s.minimum !== undefined && value < s.minimum) return false;
    if (s.maximum !== undefined && value > s.maximum) return false;
    return true;
  }
  if (typeof value === 'boolean') return types.includes('boolean');
  if (Array.isArray(value)) {
    if (!types.includes('array')) return false;
    if (s.minItems !== undefined && value.length < s.minItems) return false;
    if (s.maxItems !== undefined && value.length > s.maxItems) return false;
    return value.every((v) => conforms(s.items, v));
  }
  if (typeof value === 'object') {
    if (!types.includes('object')) return false;
    const o = value as Record<string, unknown>;
    for (const k of s.required ?? []) if (!(k in o)) return false;
    for (const [k, v] of Object.entries(o)) {
      const prop = s.properties?.[k];
      if (prop) {
        if (!conforms(prop, v)) return false;
      } else if (s.additionalProperties === false) return false;
      else if (typeof s.additionalProperties === 'object' && !conforms(s.additionalProperties, v))
        return false;
    }
    return true;
  }
  return false;
}

describe('schema resolution', () => {
  it('follows $ref and merges allOf', () => {
    const body = resolver.resolve(BODY);
    expect(body.required).toEqual(['name', 'outcome']);
    const scope = resolver.resolve(body.properties!.scope);
    expect(Object.keys(scope.properties!)).toEqual(['agentIds', 'readOnly']);
    expect(scope.description).toBe('scope');
  });

  it('reads nullable and type arrays', () => {
    const body = resolver.resolve(BODY);
    expect(schemaTypes(body.properties!.description!)).toEqual(['string', 'null']);
    expect(schemaTypes(body.properties!.legacy!)).toEqual(['string', 'null']);
    expect(isNullable(body.properties!.name!)).toBe(false);
  });
});

describe('valid values', () => {
  it('conform to the schema', () => {
    fc.assert(
      fc.property(valueArb(BODY, ctx), (v) => conforms(BODY, v)),
      { seed: 7, numRuns: 300 },
    );
  });

  it('give required members always and optional ones sometimes', () => {
    const samples = fc.sample(valueArb(BODY, ctx), { seed: 1, numRuns: 200 }) as Record<string, unknown>[];
    expect(samples.every((s) => 'name' in s && 'outcome' in s)).toBe(true);
    expect(samples.some((s) => 'scope' in s)).toBe(true);
    expect(samples.some((s) => !('scope' in s))).toBe(true);
    expect(samples.some((s) => s.description === null)).toBe(true);
  });

  it('draw named fields from their pool when there is one', () => {
    const pooled: GenContext = { resolver, pools: new Set(['agentId']) };
    const samples = fc.sample(valueArb(BODY, pooled), { seed: 3, numRuns: 300 }) as Record<string, unknown>[];
    const ids = samples.map((s) => s.agentId).filter((v): v is string => typeof v === 'string');
    expect(ids.some((v) => v.startsWith('@@pool:agentId:'))).toBe(true);
    expect(poolToken('agentId', 3)).toBe('@@pool:agentId:3@@');
  });
});

describe('mutations', () => {
  const cases = fc.sample(bodyCaseArb(BODY, ctx), { seed: 11, numRuns: 1500 });

  it('break the schema whenever they say they do', () => {
    for (const c of cases.filter((x) => x.violates)) expect(conforms(BODY, c.value), c.note).toBe(false);
  });

  it('leave a valid body valid when they claim nothing', () => {
    for (const c of cases.filter((x) => x.note === 'valid body')) expect(conforms(BODY, c.value)).toBe(true);
  });

  it('cover every kind the fuzzer promises', () => {
    const notes = cases.map((c) => c.note).join('\n');
    for (const expected of [
      /wrong type/,
      /required member removed/,
      /null \(not nullable\)/,
      /\(maxLength\)/,
      /\(maxLength \+ 1\)/,
      /\(minLength - 1\)/,
      /\(maximum \+ 1\)/,
      /\(minimum - /,
      /\(maxItems \+ 1\)/,
      /not in the enum/,
      /overflows a double/,
      /in a free-form object/,
      /unknown member/,
      /a lone high surrogate/,
      /a NUL character/,
      /invalid UTF-8/,
    ])
      expect(notes).toMatch(expected);
  });

  it('mark overflowing numbers, NUL, unpaired surrogates and invalid UTF-8 as bodies to refuse', () => {
    for (const c of cases) {
      const text = encodeJson(c.value).toString('latin1');
      if (/1e309|123e99999/.test(text) || c.note.includes('invalid UTF-8'))
        expect(c.mustRefuse, c.note).toBeDefined();
    }
  });

  it('put 1e309 in the JSON text itself', () => {
    const c = cases.find((x) => x.note.includes('1e309 (overflows'))!;
    expect(encodeJson(c.value).toString('utf8')).toMatch(/:1e309[,}]/);
  });

  it('lists the places of a value with their schemas', () => {
    const locs = locations(BODY, { name: 'a', outcome: 'flag', scope: { agentIds: ['0'.repeat(24)] } }, ctx);
    const paths = locs.map((l) => l.path.join('.'));
    expect(paths).toContain('scope.agentIds.0');
    expect(locs.find((l) => l.path.join('.') === 'description')!.present).toBe(false);
    expect(locs.find((l) => l.path.join('.') === 'name')!.required).toBe(true);
  });

  it('offers wrong-type values outside the allowed types', () => {
    expect(wrongTypeValues({ type: 'integer' })).toContainEqual(12.5);
    expect(wrongTypeValues({ type: 'number' })).not.toContainEqual(7);
    expect(wrongTypeValues({ type: ['string', 'null'] })).not.toContainEqual('fuzz');
  });
});

describe('the null sweep', () => {
  const sweep = (example?: unknown) =>
    fc.sample(nullMemberCasesArb(BODY, ctx, example), { seed: 4, numRuns: 1 })[0]!;

  it('sends null in every member of the schema, nested ones included, whatever the seed', () => {
    for (const seed of [1, 2, 3]) {
      const cases = fc.sample(nullMemberCasesArb(BODY, ctx), { seed, numRuns: 1 })[0]!;
      const notes = cases.map((c) => c.note.split(':')[0]);
      for (const member of Object.keys(resolver.resolve(BODY).properties!)) expect(notes).toContain(member);
      expect(notes).toEqual(expect.arrayContaining(['scope.agentIds', 'scope.readOnly']));
      expect(notes.some((n) => /^conditions\[0\]\.operator$/.test(n!))).toBe(true);
    }
  });

  it('marks null in a member not declared nullable as breaking the schema, and only those', () => {
    const cases = sweep();
    for (const c of cases) expect(conforms(BODY, c.value), c.note).toBe(c.violates === undefined);
    const byMember = new Map(cases.map((c) => [c.note.split(':')[0], c]));
    expect(byMember.get('name')!.violates).toBe('name is null');
    expect(byMember.get('description')!.violates).toBeUndefined();
    expect(byMember.get('scope.agentIds')!.violates).toBeUndefined();
    expect(byMember.get('scope.readOnly')!.violates).toBe('scope.readOnly is null');
  });

  it('sends an optional member alone with the required ones, so that nothing else can be refused first', () => {
    const priority = sweep().find((c) => c.note.startsWith('priority:'))!;
    expect(Object.keys(priority.value as object).sort()).toEqual(['name', 'outcome', 'priority']);
    expect((priority.value as Record<string, unknown>).priority).toBeNull();
    const readOnly = sweep().find((c) => c.note.startsWith('scope.readOnly:'))!;
    expect((readOnly.value as { scope: object }).scope).toEqual({ readOnly: null });
  });

  it('keeps an accepted example whole and adds the null to it, absent members too', () => {
    const example = { name: 'ok', outcome: 'flag', priority: 3 };
    const cases = sweep(example);
    expect(cases.find((c) => c.note.startsWith('priority:'))!.value).toEqual({ ...example, priority: null });
    expect(cases.find((c) => c.note.startsWith('when:'))!.value).toEqual({ ...example, when: null });
    expect(example.priority).toBe(3);
  });

  it('reads null as accepted by nullable types, nullable branches and untyped schemas', () => {
    expect(acceptsNull({ type: 'string' }, ctx)).toBe(false);
    expect(acceptsNull({ type: ['string', 'null'] }, ctx)).toBe(true);
    expect(acceptsNull({ oneOf: [{ type: 'string' }, { type: 'null' }] }, ctx)).toBe(true);
    expect(acceptsNull({ oneOf: [{ type: 'string' }, { type: 'number' }] }, ctx)).toBe(false);
    expect(acceptsNull({}, ctx)).toBe(true);
  });
});

describe('parameter violations', () => {
  it('check numbers, bounds, enums, patterns and repetition', () => {
    const page: JsonSchema = { type: 'number', minimum: 1, maximum: 100000 };
    expect(violatesParam(page, '3', ctx)).toBeUndefined();
    expect(violatesParam(page, 'abc', ctx)).toMatch(/not a number/);
    expect(violatesParam(page, '', ctx)).toMatch(/not a number/);
    expect(violatesParam(page, '0', ctx)).toMatch(/minimum/);
    expect(violatesParam(page, '1e300', ctx)).toMatch(/maximum/);
    expect(violatesParam(page, ['1', '2'], ctx)).toMatch(/2 times/);
    expect(violatesParam({ type: 'string', enum: ['true', 'false'] }, 'yes', ctx)).toMatch(/not one of/);
    expect(violatesParam({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, '', ctx)).toMatch(
      /does not match/,
    );
    expect(
      violatesParam({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, '2026-04-11', ctx),
    ).toBeUndefined();
    expect(violatesParam({ type: 'string' }, '', ctx)).toBeUndefined();
  });
});
