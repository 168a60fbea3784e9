/**
 * The SCIM 2.0 filter language (RFC 7644 §3.4.2.2): a hand-written lexer and recursive-descent parser (one pass over
 * the input, no backtracking, no regular expression), a compiler to Drizzle SQL in which every value is a bound
 * parameter, and an in-memory evaluator with the same semantics.
 */
export { type ScimAttributeMap, ScimFilterError } from './ast.js';
export { parseScimFilter } from './parser.js';
export { compileScimFilter } from './to-sql.js';
export { matchesScimFilter } from './evaluate.js';
