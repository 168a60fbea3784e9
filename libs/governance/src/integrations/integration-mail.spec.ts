import { describe, expect, it } from 'vitest';
import { confirmationMail, quotedName, testMail } from './integration-mail.js';

const PHISHING =
  'URGENT: your account is locked.\nCall +1 555 0100 or visit <a href="https://evil.example">here</a>';

describe('integration mail', () => {
  it('quotes a name as one line of data, without control or invisible format characters', () => {
    expect(quotedName('  On\tcall\n\nteam ')).toBe('"On call team"');
    expect(quotedName('a\u202Eb\u200Bc"d')).toBe('"a b c\\"d"');
  });

  it('keeps the name out of the subject and the opening words, and escapes it in HTML', () => {
    const mail = testMail({ id: 'f'.repeat(24), name: PHISHING });
    expect(mail.subject).toBe('Test notification from the governance service');
    expect(mail.text.startsWith('This is a test notification from the governance service')).toBe(true);
    expect(mail.text).toContain(
      'Channel, as named by the organization: "URGENT: your account is locked. Call',
    );
    expect(mail.html).not.toContain('<a href="https://evil.example">');
    expect(mail.html).toContain('&lt;a href=\\&quot;https://evil.example\\&quot;&gt;');
  });

  it('links only the confirmation URL in the confirmation mail', () => {
    const link = 'http://app.example/integrations/confirm?token=abc';
    const mail = confirmationMail({ email: 'x@example.com', name: PHISHING, link });
    expect(mail.subject).toBe('Confirm notifications from the governance service');
    expect(mail.text).toContain(link);
    expect(mail.html.match(/<a /g)).toHaveLength(1);
    expect(mail.html).toContain(`<a href="${link}">`);
    expect(mail.text.indexOf(link)).toBeLessThan(mail.text.indexOf('URGENT'));
  });
});
