import fc from 'fast-check';
import { ATTRIBUTES, FIXTURES } from './shared.fixture.js';

/**
 * Test helper: generated filters for the property tests. A filter is generated as a tree, rendered as text, and
 * read back as its comparisons; the generators range from any value on any attribute to values near the fixtures'.
 */

/** A generated comparison: how the attribute and operator are written, and the value with its kind. */
type Leaf = { attr: string; op: string; value?: Value };
type Value =
  | { kind: 'string'; v: string; asciiEscaped: boolean }
  | { kind: 'dateTime'; v: string }
  | { kind: 'literal'; v: boolean | null }
  | { kind: 'number'; v: number };
type Tree =
  | { t: 'leaf'; leaf: Leaf }
  | { t: 'and' | 'or'; left: Tree; right: Tree }
  | { t: 'not' | 'paren'; inner: Tree }
  | { t: 'valuePath'; parent: string; inner: Tree };

const escapeNonAscii = (json: string) =>
  json.replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

const renderValue = (value: Value, neutral: boolean): string => {
  switch (value.kind) {
    case 'string': {
      const json = JSON.stringify(neutral ? 'x' : value.v);
      return value.asciiEscaped ? escapeNonAscii(json) : json;
    }
    case 'dateTime':
      return JSON.stringify(neutral ? '2000-01-01T00:00:00Z' : value.v);
    case 'literal':
      return String(value.v);
    case 'number':
      return String(value.v);
  }
};

/** The filter text; with `neutral`, every string value replaced by one of the same validity. */
export const render = (tree: Tree, neutral = false): string => {
  switch (tree.t) {
    case 'leaf':
      return tree.leaf.value === undefined
        ? `${tree.leaf.attr} ${tree.leaf.op}`
        : `${tree.leaf.attr} ${tree.leaf.op} ${renderValue(tree.leaf.value, neutral)}`;
    case 'and':
    case 'or':
      return `${render(tree.left, neutral)} ${tree.t} ${render(tree.right, neutral)}`;
    case 'not':
      return `not (${render(tree.inner, neutral)})`;
    case 'paren':
      return `(${render(tree.inner, neutral)})`;
    case 'valuePath':
      return `${tree.parent}[${render(tree.inner, neutral)}]`;
  }
};

/** The comparisons of a tree with their lower-case attribute paths (as the map keys them). */
export const leavesOf = (tree: Tree, prefix = ''): { path: string; op: string; value?: Value }[] => {
  switch (tree.t) {
    case 'leaf': {
      const attr = tree.leaf.attr.slice(tree.leaf.attr.lastIndexOf(':') + 1).toLowerCase();
      return [{ path: `${prefix}${attr}`, op: tree.leaf.op.toLowerCase(), value: tree.leaf.value }];
    }
    case 'and':
    case 'or':
      return [...leavesOf(tree.left, prefix), ...leavesOf(tree.right, prefix)];
    case 'not':
    case 'paren':
      return leavesOf(tree.inner, prefix);
    case 'valuePath':
      return leavesOf(tree.inner, `${tree.parent.toLowerCase()}.`);
  }
};

export const TOP_ATTRS = [
  'userName',
  'USERNAME',
  'displayName',
  'active',
  'externalId',
  'emails',
  'emails.value',
  'Emails.Type',
  'name.givenName',
  'name.familyName',
  'meta.created',
  'meta.lastModified',
  'urn:ietf:params:scim:schemas:core:2.0:User:userName',
  'urn:ietf:params:scim:schemas:core:2.0:User:name.familyName',
  'nickName',
  'title',
];
const INNER_ATTRS = ['value', 'VALUE', 'type', 'display'];
const OPS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'EQ', 'Co', 'sW', 'GT', 'pr', 'PR'];
const HOSTILE = [
  `'); drop table scim_filter_users; --`,
  `' or '1'='1`,
  `"; select pg_sleep(1); --`,
  '%',
  '_',
  '\\',
  '%_\\',
  '$1',
  '$1::text',
  ':=',
  'null',
  '/* */',
  '\u0000',
  '\u007f\u0085\u2028',
  'ΣΊΣΥΦΟΣ',
  '😀 emoji',
  'Łukasz',
];

const stringValue = fc.record({
  kind: fc.constant('string' as const),
  v: fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc.string({ unit: 'binary-ascii' }),
    fc.constantFrom(...HOSTILE),
    fc.tuple(fc.constantFrom(...HOSTILE), fc.string()).map(([a, b]) => a + b),
  ),
  asciiEscaped: fc.boolean(),
});
const dateTimeValue = fc.record({
  kind: fc.constant('dateTime' as const),
  v: fc.oneof(
    fc
      .date({
        min: new Date('1990-01-01T00:00:00Z'),
        max: new Date('2030-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString()),
    fc.constantFrom(
      '2024-01-01T00:00:00Z',
      '2024-01-01T01:00:00+01:00',
      '2023-12-31T23:59:59.5Z',
      '2024-05-05T05:05:05.000Z',
      '2024-02-30T00:00:00Z',
    ),
  ),
});
const anyValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 4, arbitrary: stringValue },
  { weight: 2, arbitrary: dateTimeValue },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('literal' as const), v: fc.constantFrom(true, false, null) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('number' as const), v: fc.integer() }) },
);

export const leafArb = (attrs: string[]): fc.Arbitrary<Tree> =>
  fc.record({ attr: fc.constantFrom(...attrs), op: fc.constantFrom(...OPS), value: anyValue }).map((l) => ({
    t: 'leaf' as const,
    leaf: l.op.toLowerCase() === 'pr' ? { attr: l.attr, op: l.op } : l,
  }));

export const treeArb = (
  attrs: string[],
  leaf: (attrs: string[]) => fc.Arbitrary<Tree>,
  valuePaths: boolean,
): fc.Arbitrary<Tree> =>
  fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', maxDepth: 5, withCrossShrink: true },
      { weight: 3, arbitrary: leaf(attrs) },
      fc.record({
        t: fc.constantFrom('and' as const, 'or' as const),
        left: tie('tree'),
        right: tie('tree'),
      }),
      fc.record({ t: fc.constantFrom('not' as const, 'paren' as const), inner: tie('tree') }),
      ...(valuePaths
        ? [
            fc.record({
              t: fc.constant('valuePath' as const),
              parent: fc.constantFrom('emails', 'EMAILS'),
              inner: treeArb(INNER_ATTRS, leaf, false),
            }),
          ]
        : []),
    ),
  })).tree;

/** The LIKE pattern co, sw and ew should bind, written out again here rather than taken from the compiler. */
export const likePattern = (op: string, v: string) => {
  const escaped = v.replace(/[\\%_]/g, (ch) => `\\${ch}`);
  return op === 'sw' ? `${escaped}%` : op === 'ew' ? `%${escaped}` : `%${escaped}%`;
};

/** A type-aware generator whose filters mostly compile, with values near the fixtures'. */
const fixtureStrings = FIXTURES.flatMap((f) =>
  [f.userName, f.displayName, f.externalId, f.email, f.givenName, f.familyName].filter(
    (v): v is string => !!v,
  ),
);
const STRING_POOL = [
  ...new Set([
    ...fixtureStrings,
    ...fixtureStrings.map((s) => s.toUpperCase()),
    ...fixtureStrings.map((s) => s.toLowerCase()),
    ...fixtureStrings.map((s) => s.slice(0, 3)),
    ...fixtureStrings.map((s) => s.slice(-3)),
    ...fixtureStrings.map((s) => s.slice(1, 4).toUpperCase()),
    '',
    'a',
    'e',
    'z',
    'é',
    'É',
    'σ',
    'Σ',
    'ς',
    'ł',
    'İ',
    '%',
    '_',
    '\\',
    '"',
    "'",
    '@example.com',
    'EXAMPLE',
    '\uffff',
    '😀',
  ]),
];
const fixtureDates = FIXTURES.flatMap((f) => [f.created, f.lastModified]).filter((d): d is Date => !!d);
const DATE_POOL = [
  ...fixtureDates.flatMap((d) =>
    [-86_400_000, -1, 0, 1].map((delta) => new Date(d.getTime() + delta).toISOString()),
  ),
  '2024-01-01T02:00:00+02:00',
  '2023-12-31T23:59:59.5Z',
  '2000-01-01T00:00:00Z',
];
const STRING_ATTRS = TOP_ATTRS.filter((a) => {
  const path = a.slice(a.lastIndexOf(':') + 1).toLowerCase();
  return ATTRIBUTES[path]?.type === 'string';
});
export const typedLeafArb = (attrs: string[]): fc.Arbitrary<Tree> => {
  const inner = attrs === INNER_ATTRS;
  const strings = inner ? ['value', 'type', 'VALUE'] : STRING_ATTRS;
  const toLeaf = (leaf: Leaf): Tree => ({ t: 'leaf', leaf });
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .record({
          attr: fc.constantFrom(...strings),
          op: fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'Eq', 'CO'),
          v: fc.constantFrom(...STRING_POOL),
          asciiEscaped: fc.boolean(),
        })
        .map(({ attr, op, v, asciiEscaped }) =>
          toLeaf({ attr, op, value: { kind: 'string', v, asciiEscaped } }),
        ),
    },
    fc
      .record({ attr: fc.constantFrom(...strings), op: fc.constantFrom('eq', 'ne', 'pr') })
      .map(({ attr, op }) =>
        toLeaf(op === 'pr' ? { attr, op } : { attr, op, value: { kind: 'literal', v: null } }),
      ),
    ...(inner
      ? []
      : [
          fc
            .record({ op: fc.constantFrom('eq', 'ne', 'pr'), v: fc.constantFrom(true, false, null) })
            .map(({ op, v }) =>
              toLeaf(
                op === 'pr' ? { attr: 'active', op } : { attr: 'active', op, value: { kind: 'literal', v } },
              ),
            ),
          fc
            .record({
              attr: fc.constantFrom('meta.created', 'meta.lastModified'),
              op: fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le', 'pr'),
              v: fc.constantFrom(...DATE_POOL),
            })
            .map(({ attr, op, v }) =>
              toLeaf(op === 'pr' ? { attr, op } : { attr, op, value: { kind: 'dateTime', v } }),
            ),
        ]),
  );
};
