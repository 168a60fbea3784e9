import { Injectable } from '@nestjs/common';
import { and, asc, eq, isNull, lt, ne, notInArray, or, sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { type SsoDomainClaimRow, ssoDomainClaims, ssoDomains } from './sso.schema.js';

/**
 * Two tables of the SSO module: `sso_domain_claims`, each organization's claims on e-mail domains and their proofs,
 * and `sso_domains`, the verified domains that route sign-in (one organization per domain, by its primary key).
 */
@Injectable()
export class SsoDomainsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The verified domains that route to the organization. */
  async list(organizationId: string): Promise<string[]> {
    const rows = await this.tx.db
      .select({ domain: ssoDomains.domain })
      .from(ssoDomains)
      .where(eq(ssoDomains.organizationId, organizationId))
      .orderBy(asc(ssoDomains.domain));
    return rows.map((r) => r.domain);
  }

  /** The organization a domain signs in through, if any: only a verified domain routes. */
  async organizationOf(domain: string): Promise<string | undefined> {
    const [row] = await this.tx.db
      .select({ organizationId: ssoDomains.organizationId })
      .from(ssoDomains)
      .where(eq(ssoDomains.domain, sql`lower(${domain})`))
      .limit(1);
    return row?.organizationId;
  }

  /** Makes a verified domain route to the organization; false when another organization's verified one does. */
  async route(organizationId: string, domain: string, at: Date): Promise<boolean> {
    const [row] = await this.tx.db
      .insert(ssoDomains)
      .values({ domain, organizationId, createdAt: at })
      .onConflictDoNothing()
      .returning({ organizationId: ssoDomains.organizationId });
    if (row) return true;
    return (await this.organizationOf(domain)) === organizationId;
  }

  async unroute(organizationId: string, domain: string): Promise<void> {
    await this.tx.db
      .delete(ssoDomains)
      .where(and(eq(ssoDomains.organizationId, organizationId), eq(ssoDomains.domain, domain)));
  }

  /** The organization's claims, by domain (at most the 20 a configuration may list, and those added since). */
  async claims(organizationId: string): Promise<SsoDomainClaimRow[]> {
    return this.tx.db
      .select()
      .from(ssoDomainClaims)
      .where(eq(ssoDomainClaims.organizationId, organizationId))
      .orderBy(asc(ssoDomainClaims.domain))
      .limit(200);
  }

  async claim(organizationId: string, domain: string): Promise<SsoDomainClaimRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(ssoDomainClaims)
      .where(and(eq(ssoDomainClaims.organizationId, organizationId), eq(ssoDomainClaims.domain, domain)))
      .limit(1);
    return row;
  }

  /** Adds a pending claim unless the organization has one on the domain already; the claim either way. */
  async addClaim(row: SsoDomainClaimRow): Promise<SsoDomainClaimRow> {
    await this.tx.db.insert(ssoDomainClaims).values(row).onConflictDoNothing();
    return (await this.claim(row.organizationId, row.domain))!;
  }

  async updateClaim(
    organizationId: string,
    domain: string,
    patch: Partial<
      Pick<SsoDomainClaimRow, 'status' | 'verifiedAt' | 'lastCheckedAt' | 'missingSince' | 'updatedAt'>
    >,
  ): Promise<void> {
    await this.tx.db
      .update(ssoDomainClaims)
      .set(patch)
      .where(and(eq(ssoDomainClaims.organizationId, organizationId), eq(ssoDomainClaims.domain, domain)));
  }

  /** Drops the organization's claim on a domain and its routing; false when it had no claim there. */
  async dropClaim(organizationId: string, domain: string): Promise<boolean> {
    await this.unroute(organizationId, domain);
    const rows = await this.tx.db
      .delete(ssoDomainClaims)
      .where(and(eq(ssoDomainClaims.organizationId, organizationId), eq(ssoDomainClaims.domain, domain)))
      .returning({ domain: ssoDomainClaims.domain });
    return rows.length > 0;
  }

  /** Drops the organization's claims (and routing) on every domain not in `keep`; pending ones only, if asked. */
  async dropClaimsExcept(
    organizationId: string,
    keep: readonly string[],
    pendingOnly = false,
  ): Promise<void> {
    const others = keep.length > 0 ? notInArray(ssoDomainClaims.domain, [...keep]) : undefined;
    const dropped = await this.tx.db
      .delete(ssoDomainClaims)
      .where(
        and(
          eq(ssoDomainClaims.organizationId, organizationId),
          others,
          pendingOnly ? eq(ssoDomainClaims.status, 'pending') : undefined,
        ),
      )
      .returning({ domain: ssoDomainClaims.domain });
    for (const { domain } of dropped) await this.unroute(organizationId, domain);
  }

  dropPendingClaimsExcept(organizationId: string, keep: readonly string[]): Promise<void> {
    return this.dropClaimsExcept(organizationId, keep, true);
  }

  /** Verified or failing claims last checked before `before` (or never), oldest first: the daily re-check. */
  async dueForRecheck(before: Date, limit: number): Promise<SsoDomainClaimRow[]> {
    return this.tx.db
      .select()
      .from(ssoDomainClaims)
      .where(
        and(
          ne(ssoDomainClaims.status, 'pending'),
          or(isNull(ssoDomainClaims.lastCheckedAt), lt(ssoDomainClaims.lastCheckedAt, before)),
        ),
      )
      .orderBy(asc(ssoDomainClaims.lastCheckedAt))
      .limit(limit);
  }
}
