import { createHmac, hkdfSync } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#platform';

/** Keys kept derived (an organization's subject key, its masking key); past it the oldest is dropped (derivation is cheap). */
const KEYS_KEPT = 10_000;

/** Longest `subjectRef` (characters). */
export const SUBJECT_REF_MAX = 200;

/**
 * The organization's subject key, and a reference's HMAC under it. A trace's `subjectRef` (the client's own id of
 * the person: a customer number, an account id) is stored only as this HMAC, so that it can be looked up and is
 * never shown: someone reading the database cannot test a guessed reference without the key. The key of each
 * organization is derived with HKDF from ENCRYPTION_KEY (or JWT_SECRET when none is set, as SecretBox does), with
 * the organization's id in its label: no two organizations' hashes of one reference are equal. Changing that
 * secret makes earlier references unreachable (docs/data-protection.md, "Subject references").
 */
@Injectable()
export class SubjectKeys {
  private readonly material: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.material = config.encryptionKey ?? config.jwtSecret;
  }

  /** 64 hex: HMAC-SHA-256 of the reference's UTF-8 under the organization's subject key. */
  hashOf(organizationId: string, subjectRef: string): string {
    return createHmac('sha256', this.keyOf('subject-ref', organizationId))
      .update(subjectRef, 'utf8')
      .digest('hex');
  }

  /**
   * The organization's key for masking in `hash` mode (traces/pii-masking.ts): a value masked in two traces gets the
   * same token in both, and nobody without ENCRYPTION_KEY can test a guessed value against a token.
   */
  maskKeyOf(organizationId: string): Buffer {
    return this.keyOf('pii-mask', organizationId);
  }

  private keyOf(purpose: 'subject-ref' | 'pii-mask', organizationId: string): Buffer {
    const label = `${purpose}:v1:${organizationId}`;
    let key = this.keys.get(label);
    if (!key) {
      key = Buffer.from(hkdfSync('sha256', this.material, 'governance-service', label, 32));
      if (this.keys.size >= KEYS_KEPT) this.keys.delete(this.keys.keys().next().value!);
      this.keys.set(label, key);
    }
    return key;
  }
}
