import { AppError } from '#platform';

/** Bounds of a user's stored preferences: the UTF-8 JSON encoding and the nesting of objects and arrays. */
export const PREFERENCES_MAX_BYTES = 16 * 1024;
export const PREFERENCES_MAX_DEPTH = 8;

export type Preferences = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): AppError {
  return AppError.validation(message, [{ field: 'preferences', message }]);
}

/**
 * Containers nested in a JSON value (0 for a scalar, 1 for a flat object or array), or -1 when a string or
 * member name is not well-formed UTF-16: jsonb refuses a lone surrogate, so it is a 400 here, not a 500 later.
 */
function depthOf(root: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string' && !value.isWellFormed()) return -1;
    if (value === null || typeof value !== 'object') continue;
    const here = depth + 1;
    if (here > max) max = here;
    if (Array.isArray(value)) {
      for (const child of value) stack.push([child, here]);
    } else {
      for (const [key, child] of Object.entries(value)) {
        if (!key.isWellFormed()) return -1;
        stack.push([child, here]);
      }
    }
  }
  return max;
}

/**
 * JSON Merge Patch (RFC 7396): object members merge recursively, `null` removes a member, any other value
 * (arrays included) replaces it. Neither input is modified.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
      continue;
    }
    // Own members only, and defineProperty: a member named "__proto__" stays an ordinary member.
    const existing = Object.hasOwn(result, key) ? result[key] : undefined;
    Object.defineProperty(result, key, {
      value: mergePatch(existing, value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

function assertWithinBounds(value: unknown, what: string): void {
  const depth = depthOf(value);
  if (depth < 0) throw invalid(`${what} must not contain unpaired surrogate characters`);
  if (depth > PREFERENCES_MAX_DEPTH)
    throw invalid(`${what} must not nest deeper than ${PREFERENCES_MAX_DEPTH} levels`);
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > PREFERENCES_MAX_BYTES)
    throw invalid(`${what} must not exceed ${PREFERENCES_MAX_BYTES} bytes of JSON`);
}

/**
 * Checks a preferences patch (a JSON object within the size and depth bounds) and returns the merged
 * preferences, which must stay within the same bounds. Failures are 400 VALIDATION_ERROR on `preferences`.
 */
export function mergePreferences(current: Preferences, patch: unknown): Preferences {
  if (!isPlainObject(patch)) throw invalid('preferences must be a JSON object');
  assertWithinBounds(patch, 'The patch');
  const merged = mergePatch(current, patch) as Preferences;
  assertWithinBounds(merged, 'The merged preferences');
  return merged;
}
