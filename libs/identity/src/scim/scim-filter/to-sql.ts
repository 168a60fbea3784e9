import { type SQL, sql } from 'drizzle-orm';
import {
  type FilterNode,
  lookup,
  type ScimAttribute,
  type ScimAttributeMap,
  SCIM_FILTER_LIMITS,
  type ScimCompareOperator,
  ScimFilterError,
  type ScimFilterValue,
} from './ast.js';
import { parseDateTime } from './date-time.js';

/** The compiler: a parsed filter to a Drizzle SQL condition in which every value is a bound parameter. */

/** A LIKE pattern matching `value` literally (with `\` as the escape character), for co, sw and ew. */
function likePattern(op: 'co' | 'sw' | 'ew', value: string): string {
  let escaped = '';
  for (const ch of value) escaped += ch === '\\' || ch === '%' || ch === '_' ? `\\${ch}` : ch;
  return op === 'sw' ? `${escaped}%` : op === 'ew' ? `%${escaped}` : `%${escaped}%`;
}

/**
 * Compiles a parsed filter to a WHERE condition over the columns of `attributes`. Every value is a bound parameter:
 * the SQL text holds only the map's columns, fixed keywords and `$n`. The condition is never NULL (`not` and `ne`
 * behave as in memory when a column is null). An unknown attribute or a value of the wrong type is a ScimFilterError.
 */
export function compileScimFilter(node: FilterNode, attributes: ScimAttributeMap): SQL {
  return compileNode(node, attributes, '', 0);
}

function compileNode(node: FilterNode, attributes: ScimAttributeMap, prefix: string, depth: number): SQL {
  if (depth > 4 * (SCIM_FILTER_LIMITS.maxDepth + SCIM_FILTER_LIMITS.maxComparisons)) {
    throw new ScimFilterError('Filter nested too deeply');
  }
  switch (node?.kind) {
    case 'and':
    case 'or': {
      const left = compileNode(node.left, attributes, prefix, depth + 1);
      const right = compileNode(node.right, attributes, prefix, depth + 1);
      return node.kind === 'and' ? sql`(${left} and ${right})` : sql`(${left} or ${right})`;
    }
    case 'not':
      return sql`(not ${compileNode(node.filter, attributes, prefix, depth + 1)})`;
    case 'valuePath':
      return compileNode(node.filter, attributes, `${prefix}${node.attr}.`, depth + 1);
    case 'present': {
      const attribute = resolve(attributes, prefix, node.attr);
      return present(attribute);
    }
    case 'compare':
      return compileComparison(
        resolve(attributes, prefix, node.attr),
        `${prefix}${node.attr}`,
        node.op,
        node.value,
      );
    default:
      throw new ScimFilterError('Unsupported filter node');
  }
}

function resolve(attributes: ScimAttributeMap, prefix: string, attr: string): ScimAttribute {
  const path = `${prefix}${attr}`;
  const attribute = typeof attr === 'string' ? lookup(attributes, path) : undefined;
  if (!attribute) throw new ScimFilterError(`Unknown or unfilterable attribute '${path}'`);
  return attribute;
}

function present(attribute: ScimAttribute): SQL {
  const column = attribute.column;
  return attribute.type === 'string'
    ? sql`(${column} is not null and ${column} <> '')`
    : sql`(${column} is not null)`;
}

function compileComparison(
  attribute: ScimAttribute,
  path: string,
  op: ScimCompareOperator,
  value: ScimFilterValue,
): SQL {
  const column = attribute.column;
  if (value === null) {
    if (op === 'eq') return sql`(not ${present(attribute)})`;
    if (op === 'ne') return present(attribute);
    throw new ScimFilterError(`'${op}' cannot compare '${path}' with null (only eq and ne can)`);
  }
  switch (attribute.type) {
    case 'boolean': {
      if (typeof value !== 'boolean')
        throw new ScimFilterError(`'${path}' is a boolean: compare it with true or false`);
      if (op === 'eq') return value ? sql`(${column} is true)` : sql`(${column} is false)`;
      if (op === 'ne') return value ? sql`(${column} is not true)` : sql`(${column} is not false)`;
      throw new ScimFilterError(`'${op}' is not supported on the boolean '${path}' (only eq, ne and pr are)`);
    }
    case 'string': {
      if (typeof value !== 'string')
        throw new ScimFilterError(`'${path}' is a string: compare it with a "string"`);
      const left = attribute.caseExact ? sql`${column}` : sql`lower(${column})`;
      const bind = (text: string) => (attribute.caseExact ? sql`${text}::text` : sql`lower(${text}::text)`);
      switch (op) {
        case 'eq':
          return sql`(${column} is not null and ${left} = ${bind(value)})`;
        case 'ne':
          return sql`(${left} is distinct from ${bind(value)})`;
        case 'co':
        case 'sw':
        case 'ew':
          return sql`(${column} is not null and ${left} like ${bind(likePattern(op, value))} escape '\\')`;
        case 'gt':
          return sql`(${column} is not null and ${left} collate "C" > ${bind(value)})`;
        case 'ge':
          return sql`(${column} is not null and ${left} collate "C" >= ${bind(value)})`;
        case 'lt':
          return sql`(${column} is not null and ${left} collate "C" < ${bind(value)})`;
        case 'le':
          return sql`(${column} is not null and ${left} collate "C" <= ${bind(value)})`;
      }
      break;
    }
    case 'dateTime': {
      const date = typeof value === 'string' ? parseDateTime(value) : null;
      if (!date)
        throw new ScimFilterError(`'${path}' is a dateTime: compare it with an ISO 8601 date-time string`);
      const at = sql`${date.toISOString()}::timestamptz`;
      switch (op) {
        case 'eq':
          return sql`(${column} is not null and ${column} = ${at})`;
        case 'ne':
          return sql`(${column} is distinct from ${at})`;
        case 'gt':
          return sql`(${column} is not null and ${column} > ${at})`;
        case 'ge':
          return sql`(${column} is not null and ${column} >= ${at})`;
        case 'lt':
          return sql`(${column} is not null and ${column} < ${at})`;
        case 'le':
          return sql`(${column} is not null and ${column} <= ${at})`;
        case 'co':
        case 'sw':
        case 'ew':
          throw new ScimFilterError(`'${op}' is not supported on the dateTime '${path}'`);
      }
      break;
    }
  }
  throw new ScimFilterError(`'${op}' is not supported on '${path}'`);
}
