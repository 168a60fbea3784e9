// The oracles: what makes an answer a failure, whatever was sent.
import type { WireResult } from './http-client.js';
import {
  isJsonMedia,
  schemaTypes,
  type JsonSchema,
  type Operation,
  type ResponseObject,
  type SchemaResolver,
} from './openapi.js';

export type OracleName = 'socket' | '5xx' | 'envelope' | 'request-id' | 'slow' | 'accepted';

export interface Verdict {
  oracle: OracleName;
  message: string;
}

export interface OracleOptions {
  maxMs: number;
  resolver: SchemaResolver;
}

/** The documented response for a status: exact code, then `4XX`-style ranges, then `default`. */
export function documentedResponse(op: Operation, status: number): ResponseObject | undefined {
  return op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
}

/** Top-level shape check: type, required members, and the enum/const/type of each member present. */
export function shallowMatch(
  schema: JsonSchema | undefined,
  value: unknown,
  resolver: SchemaResolver,
): string | undefined {
  const s = resolver.resolve(schema);
  const branches = s.oneOf ?? s.anyOf;
  if (branches && branches.length > 0) {
    const errors = branches.map((b) => shallowMatch(b, value, resolver));
    return errors.some((e) => e === undefined) ? undefined : errors.join('; or ');
  }
  const types = schemaTypes(s);
  if (types && !typeMatches(types, value)) return `expected ${types.join(' or ')}, got ${describe(value)}`;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const key of s.required ?? []) if (!(key in obj)) return `member "${key}" is missing`;
    for (const [key, prop] of Object.entries(s.properties ?? {})) {
      if (!(key in obj)) continue;
      const p = resolver.resolve(prop);
      if (p.enum && !p.enum.some((e) => e === obj[key]))
        return `member "${key}" is ${JSON.stringify(obj[key])}, expected one of ${JSON.stringify(p.enum)}`;
      const pt = schemaTypes(p);
      if (pt && !p.oneOf && !p.anyOf && !typeMatches(pt, obj[key]))
        return `member "${key}" is ${describe(obj[key])}, expected ${pt.join(' or ')}`;
    }
  }
  return undefined;
}

function typeMatches(types: string[], value: unknown): boolean {
  return types.some((t) => {
    switch (t) {
      case 'null':
        return value === null;
      case 'array':
        return Array.isArray(value);
      case 'object':
        return value !== null && typeof value === 'object' && !Array.isArray(value);
      case 'integer':
        return Number.isInteger(value);
      case 'number':
        return typeof value === 'number';
      default:
        return typeof value === t;
    }
  });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

/** The error envelope every 4xx under /api promises: `{success: false, error: string, code: string}`. */
export function errorEnvelopeProblem(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return `not a JSON object (${describe(body)})`;
  const b = body as Record<string, unknown>;
  if (b.success !== false) return `"success" is ${JSON.stringify(b.success)}, expected false`;
  if (typeof b.error !== 'string') return `"error" is ${describe(b.error)}, expected a string`;
  if (typeof b.code !== 'string') return `"code" is ${describe(b.code)}, expected a string`;
  return undefined;
}

/** Whether a documented schema is the standard envelope (it has a `success` member). */
function isEnvelopeSchema(schema: JsonSchema | undefined, resolver: SchemaResolver): boolean {
  const s = resolver.resolve(schema);
  const branches = s.oneOf ?? s.anyOf;
  if (branches) return branches.some((b) => isEnvelopeSchema(b, resolver));
  return Boolean(s.properties?.success);
}

/** Checks the body of an answer under /api against what the document promises for it. */
export function envelopeProblem(
  op: Operation,
  status: number,
  contentType: string | undefined,
  body: Buffer,
  resolver: SchemaResolver,
  method: string,
): string | undefined {
  const documented = documentedResponse(op, status);
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (status === 204 || status === 304 || method === 'HEAD') {
    return body.length === 0 ? undefined : `${status} with a body of ${body.length} bytes`;
  }
  // A redirect the document declares without content (a browser endpoint such as the SSO callback).
  if (status >= 300 && status < 400 && documented && !documented.content && body.length === 0)
    return undefined;
  if (!media || !isJsonMedia(media)) {
    const declared = Object.keys(documented?.content ?? {}).map((m) => m.toLowerCase());
    if (media && declared.includes(media) && !isJsonMedia(media)) return undefined;
    return `a ${media || 'body without Content-Type'} answer (${body.length} bytes) where the document promises the JSON envelope${declared.length ? ` (declared: ${declared.join(', ')})` : ''}`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `Content-Type ${media} but the body is not JSON: ${JSON.stringify(body.subarray(0, 80).toString('utf8'))}`;
  }
  const schema = documented?.content?.[media]?.schema ?? documented?.content?.['application/json']?.schema;
  if (status >= 200 && status < 300) {
    if (!documented || !schema || isEnvelopeSchema(schema, resolver)) {
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        return `a ${status} whose body is ${describe(parsed)}, not the envelope`;
      const b = parsed as Record<string, unknown>;
      if (b.success !== true)
        return `a ${status} whose "success" is ${JSON.stringify(b.success)}, expected true`;
      if (!('data' in b)) return `a ${status} envelope without "data"`;
      if (schema) {
        const shape = shallowMatch(schema, parsed, resolver);
        if (shape) return `a ${status} envelope not as documented: ${shape}`;
      }
      return undefined;
    }
    const shape = shallowMatch(schema, parsed, resolver);
    return shape ? `a ${status} body not as documented: ${shape}` : undefined;
  }
  if (status >= 400 && status < 500) {
    const problem = errorEnvelopeProblem(parsed);
    if (!problem) return undefined;
    // A documented non-envelope error body (OTLP's google.rpc.Status) is fine where the document says so.
    if (schema && !isEnvelopeSchema(schema, resolver) && shallowMatch(schema, parsed, resolver) === undefined)
      return undefined;
    return `a ${status} that is not the error envelope: ${problem}: ${JSON.stringify(body.subarray(0, 160).toString('utf8'))}`;
  }
  return undefined;
}

const SCIM_ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** RFC 7644 §3.12. */
const SCIM_TYPES = [
  'invalidFilter',
  'tooMany',
  'uniqueness',
  'mutability',
  'invalidSyntax',
  'invalidPath',
  'noTarget',
  'invalidValue',
  'invalidVers',
  'sensitive',
];

export const isScimRequestPath = (path: string) => path === '/scim/v2' || /^\/scim\/v2[/?]/.test(path);

/** The RFC 7644 error body: `{schemas: [the Error URN], status: "<the HTTP status>", scimType?, detail?}`. */
export function scimErrorProblem(body: unknown, status: number): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return `not a JSON object (${describe(body)})`;
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.schemas) || !b.schemas.includes(SCIM_ERROR_URN))
    return `"schemas" is ${JSON.stringify(b.schemas)}, expected to list ${SCIM_ERROR_URN}`;
  if (b.status !== String(status)) return `"status" is ${JSON.stringify(b.status)}, expected "${status}"`;
  if ('scimType' in b && (typeof b.scimType !== 'string' || !SCIM_TYPES.includes(b.scimType)))
    return `"scimType" is ${JSON.stringify(b.scimType)}, not an RFC 7644 error type`;
  if ('detail' in b && typeof b.detail !== 'string')
    return `"detail" is ${describe(b.detail)}, expected a string`;
  return undefined;
}

/**
 * Checks an answer under /scim/v2 (RFC 7644, not the service's envelope): a 2xx is JSON (`application/scim+json`
 * or `application/json`) of the documented shape; a 4xx is the SCIM error body, as `application/scim+json`.
 */
export function scimProblem(
  op: Operation,
  status: number,
  contentType: string | undefined,
  body: Buffer,
  resolver: SchemaResolver,
  method: string,
): string | undefined {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (status === 204 || status === 304 || method === 'HEAD')
    return body.length === 0 ? undefined : `${status} with a body of ${body.length} bytes`;
  if (status >= 300 && status < 400) return undefined;
  if (media !== 'application/scim+json' && media !== 'application/json')
    return `a ${status} answered as ${media || 'a body without Content-Type'} (${body.length} bytes), not application/scim+json`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `Content-Type ${media} but the body is not JSON: ${JSON.stringify(body.subarray(0, 80).toString('utf8'))}`;
  }
  const documented = documentedResponse(op, status);
  const schema = documented?.content?.[media]?.schema ?? documented?.content?.['application/json']?.schema;
  if (status >= 200 && status < 300) {
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      return `a ${status} whose body is ${describe(parsed)}, not a SCIM resource`;
    const shape = schema ? shallowMatch(schema, parsed, resolver) : undefined;
    return shape ? `a ${status} body not as documented: ${shape}` : undefined;
  }
  if (status >= 400 && status < 500) {
    const problem = scimErrorProblem(parsed, status);
    if (problem)
      return `a ${status} that is not a SCIM error: ${problem}: ${JSON.stringify(body.subarray(0, 160).toString('utf8'))}`;
    if (media !== 'application/scim+json')
      return `a SCIM error answered as ${media}, not application/scim+json`;
  }
  return undefined;
}

export interface SentRequest {
  method: string;
  path: string;
  mustRefuse?: string;
}

/** Every verdict an answer earns. */
export function judge(op: Operation, req: SentRequest, result: WireResult, opts: OracleOptions): Verdict[] {
  const out: Verdict[] = [];
  if (!result.response) {
    out.push({ oracle: 'socket', message: result.error ?? 'no answer' });
    if (/^(EPIPE|ECONNRESET)/.test(result.error ?? '') && req.method !== 'GET')
      out[out.length - 1]!.message += ' (the connection was closed before the request was sent or answered)';
    if (result.ms > opts.maxMs)
      out.push({
        oracle: 'slow',
        message: `no answer after ${Math.round(result.ms)} ms (bound ${opts.maxMs} ms)`,
      });
    return out;
  }
  const res = result.response;
  if (res.status >= 500)
    out.push({
      oracle: '5xx',
      message: `status ${res.status}: ${JSON.stringify(res.body.subarray(0, 200).toString('utf8'))}`,
    });
  const requestId = res.headers['x-request-id'];
  if (typeof requestId !== 'string' || requestId.length === 0)
    out.push({ oracle: 'request-id', message: `status ${res.status} without an X-Request-Id header` });
  if (res.ms > opts.maxMs)
    out.push({
      oracle: 'slow',
      message: `answered ${res.status} in ${Math.round(res.ms)} ms (bound ${opts.maxMs} ms; ${res.body.length.toLocaleString('en')} bytes)`,
    });
  if (req.path.startsWith('/api/') && res.status < 500) {
    const problem = envelopeProblem(
      op,
      res.status,
      res.headers['content-type'],
      res.body,
      opts.resolver,
      req.method,
    );
    if (problem) out.push({ oracle: 'envelope', message: problem });
  }
  if (isScimRequestPath(req.path) && res.status < 500) {
    const problem = scimProblem(
      op,
      res.status,
      res.headers['content-type'],
      res.body,
      opts.resolver,
      req.method,
    );
    if (problem) out.push({ oracle: 'envelope', message: problem });
  }
  if (req.mustRefuse && res.status >= 200 && res.status < 300)
    out.push({
      oracle: 'accepted',
      message: `answered ${res.status} to a request that must be refused: ${req.mustRefuse}`,
    });
  return out;
}
