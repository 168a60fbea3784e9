import { Injectable } from '@nestjs/common';
import { lt } from 'drizzle-orm';
import { deleteInBatches, TransactionHost } from '#platform';
import { samlAssertions } from './sso.schema.js';

/**
 * `saml_assertions`: the ids of the SAML messages an organization accepted (assertions, and IdP-initiated
 * LogoutRequests as `logout:<id>`), kept past their validity so that each is accepted once on any replica.
 */
@Injectable()
export class SamlAssertionsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Records an accepted id; false when the organization had it already (the primary key settles a race). */
  async record(organizationId: string, assertionId: string, expiresAt: Date): Promise<boolean> {
    const [recorded] = await this.tx.db
      .insert(samlAssertions)
      .values({ organizationId, assertionId, expiresAt })
      .onConflictDoNothing()
      .returning({ id: samlAssertions.assertionId });
    return recorded !== undefined;
  }

  /** Deletes the ids expired before `now`, in batches; how many. */
  purgeExpired(now: Date): Promise<number> {
    return deleteInBatches(
      this.tx.db,
      samlAssertions,
      samlAssertions.assertionId,
      lt(samlAssertions.expiresAt, now),
      1000,
    );
  }
}
