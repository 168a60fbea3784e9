import { Injectable } from '@nestjs/common';
import { eq, lt } from 'drizzle-orm';
import { deleteInBatches, TransactionHost } from '#platform';
import { ssoLoginStates, type SsoLoginStateRow } from './sso.schema.js';

/** `sso_login_states`: the OIDC sign-ins under way, keyed by the SHA-256 of their `state`. */
@Injectable()
export class SsoLoginStatesRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(organizationId: string, state: Omit<SsoLoginStateRow, 'organizationId'>): Promise<void> {
    await this.tx.db.insert(ssoLoginStates).values({ ...state, organizationId });
  }

  /**
   * Takes a state once: the row is deleted as it is read, whatever its organization (the IdP's return names only
   * the state, and the row tells whose it is).
   */
  async take(id: string): Promise<SsoLoginStateRow | undefined> {
    const [row] = await this.tx.db.delete(ssoLoginStates).where(eq(ssoLoginStates.id, id)).returning();
    return row;
  }

  /** Deletes the states expired before `now`, in batches; how many. */
  purgeExpired(now: Date): Promise<number> {
    return deleteInBatches(
      this.tx.db,
      ssoLoginStates,
      ssoLoginStates.id,
      lt(ssoLoginStates.expiresAt, now),
      1000,
    );
  }
}
