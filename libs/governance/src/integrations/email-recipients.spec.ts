import { describe, expect, it } from 'vitest';
import { sha256Hex } from '#platform';
import {
  CONFIRMATION_TTL_MS,
  confirmRecipient,
  deliverableRecipients,
  newConfirmationToken,
  parseConfirmationToken,
  planRecipients,
  readRecipients,
  recipientsView,
} from './email-recipients.js';

const ORG = 'a'.repeat(24);
const INTEGRATION = 'b'.repeat(24);
const NOW = Date.parse('2026-03-01T10:00:00.000Z');

function tokens() {
  let n = 0;
  const made: string[] = [];
  return {
    made,
    next: () => {
      const token = `${ORG}${INTEGRATION}${String(n++).padStart(43, 'x')}`;
      made.push(token);
      return token;
    },
  };
}

describe('email recipients', () => {
  it('confirms members at once and issues one token per other address, storing only its hash', () => {
    const t = tokens();
    const { entries, issued } = planRecipients({
      current: [],
      requested: ['member@example.com', 'outsider@example.com'],
      memberEmails: new Set(['member@example.com']),
      nowMs: NOW,
      newToken: t.next,
    });
    expect(issued).toEqual([{ email: 'outsider@example.com', token: t.made[0] }]);
    expect(entries[0]).toEqual({
      email: 'member@example.com',
      confirmedAt: new Date(NOW).toISOString(),
      confirmedVia: 'member',
    });
    expect(entries[1]).toEqual({
      email: 'outsider@example.com',
      tokenHash: sha256Hex(t.made[0]!),
      expiresAt: new Date(NOW + CONFIRMATION_TTL_MS).toISOString(),
    });
    expect(JSON.stringify(entries)).not.toContain(t.made[0]);
    expect(recipientsView(entries)).toEqual({
      recipients: ['member@example.com', 'outsider@example.com'],
      pending: ['outsider@example.com'],
    });
  });

  it('keeps confirmed addresses and valid links on an edit, renews expired links, drops removed addresses', () => {
    const t = tokens();
    const first = planRecipients({
      current: [],
      requested: ['a@example.com', 'b@example.com', 'c@example.com'],
      memberEmails: new Set(),
      nowMs: NOW,
      newToken: t.next,
    });
    const confirmed = confirmRecipient(first.entries, t.made[0]!, NOW + 1000)!;
    expect(confirmed.email).toBe('a@example.com');
    const second = planRecipients({
      current: confirmed.entries,
      requested: ['a@example.com', 'b@example.com', 'd@example.com'],
      memberEmails: new Set(),
      nowMs: NOW + 2000,
      newToken: t.next,
    });
    expect(second.issued.map((i) => i.email)).toEqual(['d@example.com']);
    expect(second.entries.map((e) => e.email)).toEqual(['a@example.com', 'b@example.com', 'd@example.com']);
    expect(second.entries[0]!.confirmedVia).toBe('link');
    expect(second.entries[1]).toEqual(first.entries[1]);
    const later = planRecipients({
      current: second.entries,
      requested: ['b@example.com'],
      memberEmails: new Set(),
      nowMs: NOW + CONFIRMATION_TTL_MS + 1,
      newToken: t.next,
    });
    expect(later.issued.map((i) => i.email)).toEqual(['b@example.com']);
    expect(later.entries[0]!.tokenHash).not.toBe(first.entries[1]!.tokenHash);
  });

  it('accepts a token once, before it expires, and no other token', () => {
    const t = tokens();
    const { entries } = planRecipients({
      current: [],
      requested: ['a@example.com'],
      memberEmails: new Set(),
      nowMs: NOW,
      newToken: t.next,
    });
    expect(confirmRecipient(entries, `${t.made[0]!.slice(0, -1)}y`, NOW)).toBeUndefined();
    expect(confirmRecipient(entries, t.made[0]!, NOW + CONFIRMATION_TTL_MS)).toBeUndefined();
    const once = confirmRecipient(entries, t.made[0]!, NOW + CONFIRMATION_TTL_MS - 1)!;
    expect(once.entries[0]).toMatchObject({ email: 'a@example.com', confirmedVia: 'link' });
    expect(once.entries[0]).not.toHaveProperty('tokenHash');
    expect(confirmRecipient(once.entries, t.made[0]!, NOW)).toBeUndefined();
  });

  it('delivers to confirmed addresses and to pending ones that belong to a member, and reads a legacy list', () => {
    const legacy = readRecipients(['old@example.com', 'member@example.com']);
    expect(recipientsView(legacy).pending).toEqual(['old@example.com', 'member@example.com']);
    expect(deliverableRecipients(legacy, new Set(['member@example.com']))).toEqual(['member@example.com']);
    expect(readRecipients(null)).toEqual([]);
  });

  it('makes tokens that name their organization and integration and carry 256 random bits', () => {
    const token = newConfirmationToken(ORG, INTEGRATION);
    expect(token).toMatch(/^[0-9a-f]{48}[A-Za-z0-9_-]{43}$/);
    expect(newConfirmationToken(ORG, INTEGRATION)).not.toBe(token);
    expect(parseConfirmationToken(token)).toEqual({ organizationId: ORG, integrationId: INTEGRATION });
    for (const bad of ['', 'short', `${token}x`, token.toUpperCase(), `${token.slice(0, -1)}=`]) {
      expect(parseConfirmationToken(bad)).toBeUndefined();
    }
  });
});
