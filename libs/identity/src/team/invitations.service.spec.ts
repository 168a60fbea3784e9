import { describe, expect, it } from 'vitest';
import { inviteState, mintInviteToken } from './invitations.service.js';
import { TeamMail } from './team-mail.js';

const now = new Date('2026-03-01T12:00:00Z');
const later = new Date(now.getTime() + 1000);
const pending = { status: 'pending' as const, expiresAt: later, organizationName: 'Acme' };

describe('mintInviteToken', () => {
  it('returns 32 random bytes in base64url, different every time', () => {
    const a = mintInviteToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(mintInviteToken()).not.toBe(a);
  });
});

describe('inviteState', () => {
  it('admits a pending invitation before its expiry', () => {
    expect(inviteState(pending, now)).toBeUndefined();
  });

  it('names why an invitation does not admit its holder', () => {
    expect(inviteState(undefined, now)).toBe('not_found');
    expect(inviteState({ ...pending, organizationName: null }, now)).toBe('not_found');
    expect(inviteState({ ...pending, status: 'revoked' }, now)).toBe('revoked');
    expect(inviteState({ ...pending, status: 'accepted' }, now)).toBe('used');
    expect(inviteState({ ...pending, expiresAt: now }, now)).toBe('expired');
  });

  it('reports revoked and used before expired', () => {
    const past = new Date(now.getTime() - 1);
    expect(inviteState({ ...pending, status: 'revoked', expiresAt: past }, now)).toBe('revoked');
    expect(inviteState({ ...pending, status: 'accepted', expiresAt: past }, now)).toBe('used');
  });
});

describe('TeamMail.invitation', () => {
  const token = 'T'.repeat(43);

  it('links to APP_URL/invite/<token> and names the organization, inviter and role', () => {
    const mail = TeamMail.invitation('https://app.example', {
      organizationName: 'Acme',
      inviterEmail: 'ada@example.com',
      role: 'admin',
      token,
    });
    expect(mail.subject).toBe('You are invited to join Acme');
    expect(mail.text).toContain(`https://app.example/invite/${token}`);
    expect(mail.text).toContain('ada@example.com has invited you to join Acme as admin');
    expect(mail.html).toContain(`href="https://app.example/invite/${token}"`);
  });

  it('keeps a hostile organization name on one subject line and escaped in HTML', () => {
    const mail = TeamMail.invitation('https://app.example', {
      organizationName: 'Evil\r\nBcc: x@example.com <script>',
      inviterEmail: null,
      role: 'member',
      token,
    });
    expect(mail.subject).not.toMatch(/[\r\n]/);
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;');
  });
});
