import { createHash, type KeyObject, sign } from 'node:crypto';
import { canonicalJson } from '#platform';

/** A signed checkpoint as the API returns it (docs/compliance-officers.md, "Audit log"). */
export interface Checkpoint {
  id: string;
  organizationId: string;
  sequence: number;
  hash: string;
  createdAt: string;
  keyId: string;
  signature: string;
}

/** RFC 7638 thumbprint of an Ed25519 public key (its JWK `x`), computed here independently of the service. */
export function thumbprintOf(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/** The bytes a checkpoint's signature covers: the RFC 8785 canonical JSON of its claims, UTF-8. */
export function claimsBytes(checkpoint: Checkpoint, keyId = checkpoint.keyId): Buffer {
  const { organizationId, sequence, hash, createdAt } = checkpoint;
  return Buffer.from(canonicalJson({ organizationId, sequence, hash, createdAt, keyId }), 'utf8');
}

/** Signs a checkpoint's claims (with `keyId` in them) with another key, as a forger would. */
export function signClaims(checkpoint: Checkpoint, keyId: string, privateKey: KeyObject): string {
  return sign(null, claimsBytes(checkpoint, keyId), privateKey).toString('base64url');
}
