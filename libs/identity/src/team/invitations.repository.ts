import { Injectable } from '@nestjs/common';
import { and, desc, eq, gt } from 'drizzle-orm';
import { type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { organizationNameOf } from '../organizations/organization.queries.js';
import { userEmailOf } from '../users/user.queries.js';
import { invitations, type InvitationRow } from './invitation.schema.js';

/** The columns an invitation response is built from, with its inviter: neither the token hash nor the sealed token. */
export interface InvitationView {
  id: string;
  email: string;
  role: InvitationRow['role'];
  expiresAt: Date;
  createdAt: Date;
  invitedBy: { id: string; email: string | null };
}

/** What the public validate and accept routes need about a token, in one indexed lookup. */
export interface InvitationByToken {
  id: string;
  organizationId: string;
  organizationName: string | null;
  email: string;
  role: InvitationRow['role'];
  status: InvitationRow['status'];
  expiresAt: Date;
  inviterEmail: string | null;
}

const VIEW = {
  id: invitations.id,
  email: invitations.email,
  role: invitations.role,
  expiresAt: invitations.expiresAt,
  createdAt: invitations.createdAt,
  invitedById: invitations.invitedBy,
  inviterEmail: userEmailOf(invitations.invitedBy),
};

interface ViewRow extends Omit<InvitationView, 'invitedBy'> {
  invitedById: string;
  inviterEmail: string | null;
}

function toView(row: ViewRow): InvitationView {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
    invitedBy: { id: row.invitedById, email: row.inviterEmail },
  };
}

@Injectable()
export class InvitationsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: typeof invitations.$inferInsert): Promise<void> {
    await this.tx.db.insert(invitations).values(row);
  }

  /** Pending invitations of the organization that have not expired at `now`, newest first. */
  async listLive(
    organizationId: string,
    now: Date,
    page: PageRequest,
  ): Promise<{ rows: InvitationView[]; total: number }> {
    const where = this.live(organizationId, now);
    const { rows, total } = await pageWithTotal(
      this.tx.db,
      invitations,
      where,
      this.tx.db
        .select(VIEW)
        .from(invitations)
        .where(where)
        .orderBy(desc(invitations.createdAt), desc(invitations.id))
        .limit(page.limit)
        .offset(page.offset),
    );
    return { rows: rows.map(toView), total };
  }

  async findView(organizationId: string, id: string): Promise<InvitationView | undefined> {
    const [row] = await this.tx.db
      .select(VIEW)
      .from(invitations)
      .where(and(eq(invitations.organizationId, organizationId), eq(invitations.id, id)))
      .limit(1);
    return row && toView(row);
  }

  /** A pending invitation (expired or not) of the organization, locked until the transaction ends. */
  async findPendingForUpdate(organizationId: string, id: string): Promise<InvitationRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(invitations)
      .where(
        and(
          eq(invitations.organizationId, organizationId),
          eq(invitations.id, id),
          eq(invitations.status, 'pending'),
        ),
      )
      .limit(1)
      .for('update');
    return row;
  }

  /**
   * The pending, unexpired invitation for this e-mail in the organization. There is at most one: creation and
   * resend check this under the organization lock.
   */
  async findLiveIdByEmail(
    organizationId: string,
    email: string,
    now: Date,
  ): Promise<{ id: string } | undefined> {
    const [row] = await this.tx.db
      .select({ id: invitations.id })
      .from(invitations)
      .where(and(this.live(organizationId, now), eq(invitations.email, email)))
      .orderBy(desc(invitations.createdAt))
      .limit(1);
    return row;
  }

  /** Marks a pending invitation revoked; undefined when there is none (unknown, not pending, other organization). */
  async revoke(organizationId: string, id: string, at: Date): Promise<{ id: string } | undefined> {
    const [row] = await this.tx.db
      .update(invitations)
      .set({ status: 'revoked', revokedAt: at, updatedAt: at })
      .where(
        and(
          eq(invitations.organizationId, organizationId),
          eq(invitations.id, id),
          eq(invitations.status, 'pending'),
        ),
      )
      .returning({ id: invitations.id });
    return row;
  }

  async renew(organizationId: string, id: string, expiresAt: Date, at: Date): Promise<void> {
    await this.tx.db
      .update(invitations)
      .set({ expiresAt, updatedAt: at })
      .where(
        and(
          eq(invitations.organizationId, organizationId),
          eq(invitations.id, id),
          eq(invitations.status, 'pending'),
        ),
      );
  }

  /** The invitation with this token hash, its organization's name and its inviter's e-mail (unique index). */
  async findByTokenHash(tokenHash: string): Promise<InvitationByToken | undefined> {
    const [row] = await this.tx.db
      .select({
        id: invitations.id,
        organizationId: invitations.organizationId,
        organizationName: organizationNameOf(invitations.organizationId),
        email: invitations.email,
        role: invitations.role,
        status: invitations.status,
        expiresAt: invitations.expiresAt,
        inviterEmail: userEmailOf(invitations.invitedBy),
      })
      .from(invitations)
      .where(eq(invitations.tokenHash, tokenHash))
      .limit(1);
    return row;
  }

  /**
   * Claims a pending, unexpired invitation for `userId`: one conditional update, so that of two concurrent
   * accepts exactly one gets the row (the other waits for the row lock, then finds it no longer pending).
   */
  async markAccepted(id: string, userId: string, at: Date): Promise<boolean> {
    const rows = await this.tx.db
      .update(invitations)
      .set({ status: 'accepted', acceptedBy: userId, acceptedAt: at, updatedAt: at })
      .where(and(eq(invitations.id, id), eq(invitations.status, 'pending'), gt(invitations.expiresAt, at)))
      .returning({ id: invitations.id });
    return rows.length === 1;
  }

  private live(organizationId: string, now: Date) {
    return and(
      eq(invitations.organizationId, organizationId),
      eq(invitations.status, 'pending'),
      gt(invitations.expiresAt, now),
    );
  }
}
