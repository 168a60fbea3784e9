import { Injectable } from '@nestjs/common';
import { and, eq, gt, lt } from 'drizzle-orm';
import { deleteInBatches, TransactionHost } from '#platform';
import { samlRequests, type SamlRequestRow } from './sso.schema.js';

/**
 * `saml_requests`: the AuthnRequests and LogoutRequests this service sent and whose answer it awaits. A row is
 * deleted when its answer is accepted, so an answer is accepted once on any replica.
 */
@Injectable()
export class SamlRequestsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(organizationId: string, request: Omit<SamlRequestRow, 'organizationId'>): Promise<void> {
    await this.tx.db.insert(samlRequests).values({ ...request, organizationId });
  }

  /**
   * The unexpired request with this id and kind, whatever its organization: an answer names only the request
   * (InResponseTo), and the row tells whose it is.
   */
  async findPending(
    id: string,
    kind: SamlRequestRow['kind'],
    now: Date,
  ): Promise<SamlRequestRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(samlRequests)
      .where(and(eq(samlRequests.id, id), eq(samlRequests.kind, kind), gt(samlRequests.expiresAt, now)))
      .limit(1);
    return row;
  }

  /** Deletes the unexpired request, reporting whether this call did: of concurrent answers, one takes it. */
  async take(organizationId: string, id: string, kind: SamlRequestRow['kind'], now: Date): Promise<boolean> {
    const taken = await this.tx.db
      .delete(samlRequests)
      .where(
        and(
          eq(samlRequests.id, id),
          eq(samlRequests.organizationId, organizationId),
          eq(samlRequests.kind, kind),
          gt(samlRequests.expiresAt, now),
        ),
      )
      .returning({ id: samlRequests.id });
    return taken.length === 1;
  }

  /** Deletes the requests expired before `now`, in batches; how many. */
  purgeExpired(now: Date): Promise<number> {
    return deleteInBatches(this.tx.db, samlRequests, samlRequests.id, lt(samlRequests.expiresAt, now), 1000);
  }
}
