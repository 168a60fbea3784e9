// What the fuzzer's arbitraries produce and what they draw from: a request before its placeholders are resolved
// (`@@cred:…@@`, `@@pool:…@@`), the context of one operation and credential kind, and the mutator's shape.
import type fc from 'fast-check';
import type { Operation } from './openapi.js';
import type { GenContext } from './schema-arbitrary.js';

/** A credential kind a request is sent with (`scim`: the organization's SCIM bearer token, on /scim/v2). */
export type CredKind = 'jwt' | 'workspaceKey' | 'agentKey' | 'scim' | 'none';

export const credToken = (kind: Exclude<CredKind, 'none'>) => `@@cred:${kind}@@`;

/** How one credential kind is presented: a header and its value (with the credential placeholder). */
export interface CredentialHeader {
  kind: Exclude<CredKind, 'none'>;
  header: string;
  value: string;
}

/** A request before placeholders are resolved. */
export interface Draft {
  method: string;
  /** Path parameter values, already percent-encoded as they go on the wire. */
  pathParams: Record<string, string>;
  /** `name=value` pairs, already encoded; joined with `&`. */
  query: string[];
  headers: [string, string][];
  body?: Buffer;
  mutator: string;
  note: string;
  mustRefuse?: string;
}

export interface RequestContext extends GenContext {
  op: Operation;
  kind: CredKind;
  /** How each credential kind the operation accepts is sent. */
  credentials: CredentialHeader[];
  /** Supported schema versions (from GET /versions). */
  versions: string[];
  /** Wide bodies with this many members (50,000; fewer once they are known to be slow, see main.ts). */
  wideKeys: number;
  /** A body the service accepted for this operation (from the fuzzer's set-up), if any. */
  example?: unknown;
}

export interface Mutator {
  name: string;
  family: 'valid' | 'body' | 'json' | 'path' | 'query' | 'header';
  weight: number;
  applies(ctx: RequestContext): boolean;
  arb(base: Draft, ctx: RequestContext): fc.Arbitrary<Draft>;
}
