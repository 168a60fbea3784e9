import { randomBytes } from 'node:crypto';
import { safeEqual, sha256Hex } from '#platform';

/** How long a recipient's confirmation link stays valid. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 3600 * 1000;

/**
 * One address of an e-mail integration, as stored in its `recipients` column. Only `email` is ever shown (in
 * `config.recipients`, and in `config.pending` while it is not confirmed); the token's hash never leaves the service.
 */
export interface RecipientEntry {
  email: string;
  /** When it was confirmed: at once for an active member of the organization, or by its link. Absent while pending. */
  confirmedAt?: string;
  confirmedVia?: 'member' | 'link';
  /** Pending: the SHA-256 (hex) of its confirmation token, single use, and when the token expires. */
  tokenHash?: string;
  expiresAt?: string;
}

/** The `recipients` column of an e-mail integration (no migration: the jsonb column holds this object). */
export interface StoredRecipients {
  addresses: RecipientEntry[];
}

/**
 * The entries of a stored column. A plain list was written before recipients had to confirm: its addresses are read
 * as pending with no token (nothing is sent to them unless they belong to an active member), and saving the
 * integration's recipients again confirms the members and mails the others a link.
 */
export function readRecipients(stored: string[] | StoredRecipients | null | undefined): RecipientEntry[] {
  if (!stored) return [];
  if (Array.isArray(stored)) return stored.map((email) => ({ email }));
  return Array.isArray(stored.addresses) ? stored.addresses : [];
}

export const isConfirmed = (entry: RecipientEntry): boolean => entry.confirmedAt !== undefined;

/** What the API shows: every address in order, and those still waiting for their confirmation. */
export function recipientsView(entries: readonly RecipientEntry[]): {
  recipients: string[];
  pending: string[];
} {
  return {
    recipients: entries.map((e) => e.email),
    pending: entries.filter((e) => !isConfirmed(e)).map((e) => e.email),
  };
}

/** A confirmation token just issued: the plaintext goes into one e-mail, only its hash is stored. */
export interface IssuedToken {
  email: string;
  token: string;
}

/**
 * A new token: the organization's id and the integration's id (48 hex characters, so that the public confirmation
 * finds the one integration it belongs to, in its organization only) followed by 256 random bits in base64url.
 */
export function newConfirmationToken(organizationId: string, integrationId: string): string {
  return `${organizationId}${integrationId}${randomBytes(32).toString('base64url')}`;
}

const TOKEN_SHAPE = /^([0-9a-f]{24})([0-9a-f]{24})[A-Za-z0-9_-]{43}$/;

/** The organization and integration a token names, or undefined when it does not have a token's shape. */
export function parseConfirmationToken(
  token: string,
): { organizationId: string; integrationId: string } | undefined {
  const match = TOKEN_SHAPE.exec(token);
  return match ? { organizationId: match[1]!, integrationId: match[2]! } : undefined;
}

/**
 * The entries after the recipients are set to `requested` (already normalised and de-duplicated): confirmed addresses
 * stay confirmed; active members' addresses are confirmed at once; a pending address whose link is still valid keeps
 * it (no second mail); every other address becomes pending with a new token, returned to be mailed. Addresses no
 * longer listed are dropped.
 */
export function planRecipients(input: {
  current: readonly RecipientEntry[];
  requested: readonly string[];
  memberEmails: ReadonlySet<string>;
  nowMs: number;
  newToken: () => string;
}): { entries: RecipientEntry[]; issued: IssuedToken[] } {
  const byEmail = new Map(input.current.map((e) => [e.email, e]));
  const now = new Date(input.nowMs).toISOString();
  const issued: IssuedToken[] = [];
  const entries = input.requested.map((email): RecipientEntry => {
    const previous = byEmail.get(email);
    if (previous && isConfirmed(previous)) return previous;
    if (input.memberEmails.has(email)) return { email, confirmedAt: now, confirmedVia: 'member' };
    if (previous?.tokenHash && previous.expiresAt && Date.parse(previous.expiresAt) > input.nowMs) {
      return previous;
    }
    const token = input.newToken();
    issued.push({ email, token });
    return {
      email,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(input.nowMs + CONFIRMATION_TTL_MS).toISOString(),
    };
  });
  return { entries, issued };
}

/**
 * Confirms the pending entry whose token this is, if its link has not expired: the token's hash is compared with
 * every pending entry's in constant time, and the confirmed entry keeps no hash (single use). Undefined for an
 * unknown, used or expired token.
 */
export function confirmRecipient(
  entries: readonly RecipientEntry[],
  token: string,
  nowMs: number,
): { entries: RecipientEntry[]; email: string } | undefined {
  const hash = sha256Hex(token);
  let found = -1;
  entries.forEach((entry, i) => {
    if (entry.tokenHash !== undefined && safeEqual(entry.tokenHash, hash) && found < 0) found = i;
  });
  const entry = entries[found];
  if (!entry || isConfirmed(entry) || !entry.expiresAt || Date.parse(entry.expiresAt) <= nowMs)
    return undefined;
  const confirmed: RecipientEntry = {
    email: entry.email,
    confirmedAt: new Date(nowMs).toISOString(),
    confirmedVia: 'link',
  };
  return { entries: entries.map((e, i) => (i === found ? confirmed : e)), email: entry.email };
}

/**
 * The addresses a notification goes to: the confirmed ones, and pending ones that now belong to an active member
 * of the organization (a member who joined later, or a list written before confirmation existed).
 */
export function deliverableRecipients(
  entries: readonly RecipientEntry[],
  memberEmails: ReadonlySet<string>,
): string[] {
  return entries.filter((e) => isConfirmed(e) || memberEmails.has(e.email)).map((e) => e.email);
}
