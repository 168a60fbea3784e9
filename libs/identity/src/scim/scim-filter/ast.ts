import type { SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** What every part of the filter shares: the limits, the one error, the parsed tree and the attribute map. */

/** The parser's limits: a filter beyond any of them is refused before anything else is done with it. */
export const SCIM_FILTER_LIMITS = { maxLength: 4096, maxDepth: 32, maxComparisons: 100 } as const;

/**
 * Every refusal of a filter, from parsing, compiling or a hand-built node: the caller answers 400 with scimType
 * `invalidFilter`. `position` is the 0-based offset in the filter text where one is known.
 */
export class ScimFilterError extends Error {
  readonly scimType = 'invalidFilter';

  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(position === undefined ? message : `${message} (at character ${position + 1})`);
    this.name = 'ScimFilterError';
  }
}

/** A comparison operator of the filter language (`pr` is a node of its own). */
export type ScimCompareOperator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

/** A compValue: a JSON literal, number or string (already unescaped). */
export type ScimFilterValue = string | number | boolean | null;

/**
 * A parsed filter. `attr` is the lower-case attribute path without its schema URN (`name.givenname`); inside a
 * `valuePath` the inner filter's attributes are relative to `attr` (`emails[value eq "x"]` holds `value`).
 */
export type FilterNode =
  | { kind: 'compare'; attr: string; op: ScimCompareOperator; value: ScimFilterValue }
  | { kind: 'present'; attr: string }
  | { kind: 'and'; left: FilterNode; right: FilterNode }
  | { kind: 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; filter: FilterNode }
  | { kind: 'valuePath'; attr: string; filter: FilterNode };

/** How one filterable attribute maps to the database: its column (or expression), SCIM type and case sensitivity. */
export interface ScimAttribute {
  column: SQL | AnyPgColumn;
  type: 'string' | 'boolean' | 'dateTime';
  caseExact: boolean;
}

/** The filterable attributes of a resource, keyed by lower-case attribute path ('username', 'emails.value'). */
export type ScimAttributeMap = Record<string, ScimAttribute>;

/** An attribute of the map by its path; only the map's own keys, never an inherited property ('constructor'). */
export function lookup(attributes: ScimAttributeMap, path: string): ScimAttribute | undefined {
  return Object.hasOwn(attributes, path) ? attributes[path] : undefined;
}
