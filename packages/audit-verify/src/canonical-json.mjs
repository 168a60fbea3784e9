/**
 * RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code units, no whitespace, strings and
 * numbers written as ECMAScript's JSON.stringify writes them (which is what the RFC specifies). Members whose value
 * is undefined are dropped, as JSON.stringify drops them; non-finite numbers have no JSON form and are refused.
 *
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError('Non-finite numbers have no JSON form');
    }
    if (
      value === undefined ||
      typeof value === 'function' ||
      typeof value === 'symbol' ||
      typeof value === 'bigint'
    ) {
      throw new TypeError(`A ${typeof value} has no JSON form`);
    }
    return JSON.stringify(value);
  }
  if (typeof value.toJSON === 'function') return canonicalJson(value.toJSON());
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  // Array.prototype.sort without a comparator compares strings by UTF-16 code units, as RFC 8785 §3.2.3 requires.
  const members = Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
  return `{${members.join(',')}}`;
}
