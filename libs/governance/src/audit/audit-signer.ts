import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, canonicalJson, Clock } from '#platform';
import { AuditRepository } from './audit.repository.js';

/** The signed part of a checkpoint (docs/compliance-officers.md, "Audit log", signed checkpoints). */
export interface CheckpointClaims {
  organizationId: string;
  sequence: number;
  hash: string;
  createdAt: string;
  keyId: string;
}

/** RFC 7638 thumbprint of an Ed25519 public key: SHA-256 of its required JWK members in order, base64url. */
export function jwkThumbprint(publicKey: KeyObject): string {
  const { x } = publicKey.export({ format: 'jwk' });
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}

/**
 * The operator's audit signing key (AUDIT_SIGNING_KEY, or the one generated into DATA_DIR outside production). Its
 * public half is recorded at start-up with the keys used before, so that checkpoints signed before a rotation stay
 * verifiable; `keyId` is the key's RFC 7638 thumbprint, which anyone can recompute from the public key.
 */
@Injectable()
export class AuditSigner implements OnModuleInit {
  private readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly keyId: string;

  constructor(
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'auditSigningKey'>,
    private readonly repo: AuditRepository,
    private readonly clock: Clock,
  ) {
    this.privateKey = createPrivateKey(config.auditSigningKey);
    this.publicKey = createPublicKey(this.privateKey);
    this.keyId = jwkThumbprint(this.publicKey);
  }

  async onModuleInit(): Promise<void> {
    await this.repo.addSigningKey({
      keyId: this.keyId,
      publicKeyPem: this.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      createdAt: this.clock.now(),
    });
  }

  /** The base64url Ed25519 signature of the UTF-8 bytes of the claims' RFC 8785 canonical JSON. */
  sign(claims: CheckpointClaims): string {
    return sign(null, Buffer.from(canonicalJson(claims), 'utf8'), this.privateKey).toString('base64url');
  }
}
