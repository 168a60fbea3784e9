import { Injectable } from '@nestjs/common';
import { asc, eq, sql } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { ssoDomains } from './sso.schema.js';

/** The sso_domains table: which organization an e-mail domain signs in through. */
@Injectable()
export class SsoDomainsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(organizationId: string): Promise<string[]> {
    const rows = await this.tx.db
      .select({ domain: ssoDomains.domain })
      .from(ssoDomains)
      .where(eq(ssoDomains.organizationId, organizationId))
      .orderBy(asc(ssoDomains.domain));
    return rows.map((r) => r.domain);
  }

  /**
   * Makes `domains` the organization's, in the caller's transaction: its other domains are released, and the
   * domains another organization holds are returned (nothing of them is taken). The primary key settles races
   * between organizations claiming one domain at once.
   */
  async replace(organizationId: string, domains: readonly string[], at: Date): Promise<string[]> {
    await this.tx.db.delete(ssoDomains).where(eq(ssoDomains.organizationId, organizationId));
    if (domains.length === 0) return [];
    const inserted = await this.tx.db
      .insert(ssoDomains)
      .values(domains.map((domain) => ({ domain, organizationId, createdAt: at })))
      .onConflictDoNothing()
      .returning({ domain: ssoDomains.domain });
    const mine = new Set(inserted.map((r) => r.domain));
    return domains.filter((d) => !mine.has(d));
  }

  async release(organizationId: string): Promise<void> {
    await this.tx.db.delete(ssoDomains).where(eq(ssoDomains.organizationId, organizationId));
  }

  /** The organization a domain signs in through, if any. */
  async organizationOf(domain: string): Promise<string | undefined> {
    const [row] = await this.tx.db
      .select({ organizationId: ssoDomains.organizationId })
      .from(ssoDomains)
      .where(eq(ssoDomains.domain, sql`lower(${domain})`))
      .limit(1);
    return row?.organizationId;
  }
}
