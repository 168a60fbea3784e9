import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AuditLog,
  Clock,
  newId,
  type Plan,
  type RequestMeta,
  safeEqual,
  sha256Hex,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { ScimTokenCreatedDto, ScimTokenDeletedDto, ScimTokenStatusDto } from './dto/scim-token.dto.js';
import { ScimTokensRepository } from './scim-tokens.repository.js';

export const SCIM_TOKEN_PREFIX = 'scim_';
const SCIM_TOKEN_SHAPE = /^scim_[0-9a-f]{48}$/;

/** Who a SCIM request acts for: the organization of the token, and the token's id for the audit log. */
export interface ScimPrincipal {
  organizationId: string;
  plan: Plan;
  tokenId: string;
}

/**
 * The SCIM token: `scim_` and 48 hexadecimal characters, shown once, stored as its SHA-256, one per
 * organization; a new one revokes the old at once; `lastUsedAt` kept.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim-token.e2e-spec.ts.
 */
@Injectable()
export class ScimTokensService {
  constructor(
    private readonly tokens: ScimTokensRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  rotate(actor: Actor, meta: RequestMeta): Promise<ScimTokenCreatedDto> {
    const token = `${SCIM_TOKEN_PREFIX}${randomBytes(24).toString('hex')}`;
    return this.tx.run(async () => {
      const now = this.clock.now();
      const previous = await this.tokens.find(actor.organizationId);
      const id = newId(now.getTime());
      await this.tokens.replace({
        organizationId: actor.organizationId,
        id,
        tokenHash: sha256Hex(token),
        createdBy: actor.userId,
        createdAt: now,
        lastUsedAt: null,
      });
      await this.audit.record(
        actor,
        'scim.token.created',
        { type: 'scim_token', id },
        { replaced: previous?.id ?? null },
        meta,
      );
      return { token, createdAt: now.toISOString() };
    });
  }

  async status(actor: Actor): Promise<ScimTokenStatusDto> {
    const row = await this.tokens.find(actor.organizationId);
    return {
      exists: row !== undefined,
      createdAt: row?.createdAt.toISOString() ?? null,
      lastUsedAt: row?.lastUsedAt?.toISOString() ?? null,
    };
  }

  revoke(actor: Actor, meta: RequestMeta): Promise<ScimTokenDeletedDto> {
    return this.tx.run(async () => {
      const row = await this.tokens.find(actor.organizationId);
      if (!row) return { deleted: false };
      await this.tokens.remove(actor.organizationId);
      await this.audit.record(
        actor,
        'scim.token.revoked',
        { type: 'scim_token', id: row.id },
        undefined,
        meta,
      );
      return { deleted: true };
    });
  }

  /**
   * The organization a bearer token belongs to, or undefined: looked up by its hash, the hashes compared in
   * constant time, the organization live. Records the use.
   */
  async resolve(token: string): Promise<ScimPrincipal | undefined> {
    if (!SCIM_TOKEN_SHAPE.test(token)) return undefined;
    const hash = sha256Hex(token);
    const row = await this.tokens.findByHash(hash);
    if (!row || !safeEqual(row.tokenHash, hash)) return undefined;
    const organization = await this.organizations.findById(row.organizationId);
    if (!organization || organization.deletedAt) return undefined;
    // `lastUsedAt` to the minute: no write on every request.
    const now = this.clock.now();
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= 60_000) {
      await this.tokens.touch(row.organizationId, row.id, now);
    }
    return { organizationId: row.organizationId, plan: organization.plan, tokenId: row.id };
  }
}
