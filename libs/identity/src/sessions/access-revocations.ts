import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type DatabaseHandle, NotificationBus, TransactionHost } from '#platform';

/**
 * Announced when a user's access ends or narrows (a session revoked, logout, suspension, removal, SCIM
 * deactivation, a role change): every replica closes that user's open event streams, in the organization, or in
 * every organization when it is null. The payload is `AccessRevokedNotice` as JSON.
 */
export const ACCESS_REVOKED_CHANNEL = 'svc_access_revoked';

export interface AccessRevokedNotice {
  userId: string;
  organizationId: string | null;
}

/** Parses a notice from the channel; undefined for anything else. */
export function accessRevokedNoticeOf(payload: string): AccessRevokedNotice | undefined {
  try {
    const value = JSON.parse(payload) as Partial<AccessRevokedNotice>;
    if (typeof value?.userId !== 'string') return undefined;
    return {
      userId: value.userId,
      organizationId: typeof value.organizationId === 'string' ? value.organizationId : null,
    };
  } catch {
    return undefined;
  }
}

/** Sends the announcement from inside the transaction that ends the access, so that it goes out on commit only. */
@Injectable()
export class AccessRevocations {
  private readonly bus: NotificationBus;

  constructor(
    private readonly tx: TransactionHost,
    @Inject(DATABASE) handle: DatabaseHandle,
  ) {
    this.bus = NotificationBus.of(handle);
  }

  announce(userId: string, organizationId: string | null): Promise<void> {
    const notice: AccessRevokedNotice = { userId, organizationId };
    return this.bus.notify(this.tx, ACCESS_REVOKED_CHANNEL, JSON.stringify(notice));
  }
}
