import { describe, expect, it } from 'vitest';
import { domainRefusal } from './domain-policy.js';

describe('domainRefusal', () => {
  it('accepts an organization’s own domain and its subdomains', () => {
    for (const domain of ['acme.example', 'bigcorp.co.uk', 'eu.bigcorp.com', 'team.github.io']) {
      expect(domainRefusal(domain), domain).toBeUndefined();
    }
  });

  it('refuses public suffixes from both sections of the Public Suffix List', () => {
    for (const domain of ['co.uk', 'com', 'github.io', 'blogspot.com', 'ac.jp']) {
      expect(domainRefusal(domain), domain).toMatch(/public suffix/);
    }
  });

  it('refuses free-mail and disposable providers beyond the largest ones', () => {
    for (const domain of [
      'gmail.com',
      'hotmail.co.uk',
      'outlook.de',
      'yahoo.co.jp',
      'mailinator.com',
      'gmx.de',
    ]) {
      expect(domainRefusal(domain), domain).toMatch(/public mail provider/);
    }
  });

  it('refuses what is no domain name', () => {
    for (const domain of ['127.0.0.1', 'not a domain', ''])
      expect(domainRefusal(domain), domain).toBeDefined();
  });
});
