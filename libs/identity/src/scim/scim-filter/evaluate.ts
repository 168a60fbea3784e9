import {
  type FilterNode,
  lookup,
  type ScimAttribute,
  type ScimAttributeMap,
  SCIM_FILTER_LIMITS,
  type ScimCompareOperator,
  type ScimFilterValue,
} from './ast.js';
import { parseDateTime } from './date-time.js';

/** The in-memory evaluator: a parsed filter against one resource, with the SQL compiler's semantics (to-sql.ts). */

/**
 * Lower case one code point at a time with the simple (one-to-one) mapping, as PostgreSQL's lower() does: no
 * context-dependent final sigma, and 'İ' becomes 'i' rather than 'i̇'.
 */
function foldCase(text: string): string {
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return text.toLowerCase();
  let out = '';
  for (const ch of text) {
    const lower = ch.toLowerCase();
    out += lower.length === ch.length ? lower : String.fromCodePoint(lower.codePointAt(0)!);
  }
  return out;
}

/** Code-point (UTF-8 byte) order, as PostgreSQL's "C" collation compares. */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

type Getter = (path: string) => unknown;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** A record's value at a lower-case relative path, matching its keys case-insensitively. */
function recordGetter(record: Record<string, unknown>): Getter {
  return (path) => {
    let current: unknown = record;
    for (const segment of path.split('.')) {
      if (!isRecord(current)) return undefined;
      const key = Object.keys(current).find((k) => k.toLowerCase() === segment);
      current = key === undefined ? undefined : current[key];
    }
    return current;
  };
}

/** The values of an attribute: a multi-valued one's elements, a single one as one element, none if absent. */
function valuesOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined);
  return value === null || value === undefined ? [] : [value];
}

const isPresent = (value: unknown) => value !== null && value !== undefined && value !== '';

/**
 * Evaluates a parsed filter against one resource in memory, with the semantics of `compileScimFilter`. `get` returns
 * the value at a lower-case attribute path (string, boolean, Date, null/undefined, or an array of those for a
 * multi-valued attribute, which matches when any element does; for a valuePath it may also return the complex
 * values as records). `attributes`, when given, supplies caseExact and dateTime types; without it strings compare
 * case-insensitively. A comparison of mismatched types is false, never an error.
 */
export function matchesScimFilter(
  node: FilterNode,
  get: (path: string) => unknown,
  attributes?: ScimAttributeMap,
): boolean {
  return evaluate(node, get, '', attributes ?? {}, 0);
}

function evaluate(
  node: FilterNode,
  get: Getter,
  prefix: string,
  attributes: ScimAttributeMap,
  depth: number,
): boolean {
  if (depth > 4 * (SCIM_FILTER_LIMITS.maxDepth + SCIM_FILTER_LIMITS.maxComparisons)) return false;
  switch (node?.kind) {
    case 'and':
      return (
        evaluate(node.left, get, prefix, attributes, depth + 1) &&
        evaluate(node.right, get, prefix, attributes, depth + 1)
      );
    case 'or':
      return (
        evaluate(node.left, get, prefix, attributes, depth + 1) ||
        evaluate(node.right, get, prefix, attributes, depth + 1)
      );
    case 'not':
      return !evaluate(node.filter, get, prefix, attributes, depth + 1);
    case 'valuePath': {
      const parent = get(node.attr);
      const innerPrefix = `${prefix}${node.attr}.`;
      const elements = valuesOf(parent);
      if (elements.length > 0 && elements.every(isRecord)) {
        return elements.some((element) =>
          evaluate(node.filter, recordGetter(element), innerPrefix, attributes, depth + 1),
        );
      }
      return evaluate(node.filter, (path) => get(`${node.attr}.${path}`), innerPrefix, attributes, depth + 1);
    }
    case 'present':
      return valuesOf(get(node.attr)).some(isPresent);
    case 'compare': {
      const values = valuesOf(get(node.attr));
      const attribute = lookup(attributes, `${prefix}${node.attr}`);
      const { op, value } = node;
      if (value === null) {
        const present = values.some(isPresent);
        return op === 'eq' ? !present : op === 'ne' ? present : false;
      }
      if (op === 'ne')
        return values.length === 0 || values.some((v) => !compareOne(v, 'eq', value, attribute));
      return values.some((v) => compareOne(v, op, value, attribute));
    }
    default:
      return false;
  }
}

function ordered(op: ScimCompareOperator, difference: number): boolean {
  switch (op) {
    case 'eq':
      return difference === 0;
    case 'gt':
      return difference > 0;
    case 'ge':
      return difference >= 0;
    case 'lt':
      return difference < 0;
    case 'le':
      return difference <= 0;
    default:
      return false;
  }
}

function compareOne(
  actual: unknown,
  op: ScimCompareOperator,
  value: Exclude<ScimFilterValue, null>,
  attribute: ScimAttribute | undefined,
): boolean {
  if (typeof value === 'boolean') return op === 'eq' && actual === value;
  if (typeof value === 'number') return typeof actual === 'number' && ordered(op, actual - value);
  if (typeof value !== 'string') return false;
  if (actual instanceof Date || attribute?.type === 'dateTime') {
    const left =
      actual instanceof Date
        ? actual.getTime()
        : typeof actual === 'string'
          ? (parseDateTime(actual)?.getTime() ?? NaN)
          : NaN;
    const right = parseDateTime(value)?.getTime() ?? NaN;
    if (Number.isNaN(left) || Number.isNaN(right)) return false;
    return ordered(op, left - right);
  }
  if (typeof actual !== 'string') return false;
  const caseExact = attribute?.caseExact ?? false;
  const a = caseExact ? actual : foldCase(actual);
  const b = caseExact ? value : foldCase(value);
  switch (op) {
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    default:
      return ordered(op, a === b ? 0 : compareCodePoints(a, b));
  }
}
