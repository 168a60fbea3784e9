import { createRequire } from 'node:module';
import { parse } from 'tldts';

/**
 * Free-mail and disposable-mail domains, from a maintained list (the `email-providers` package, about 8,800
 * domains): nobody's organization owns them, so none may route sign-in to one organization's IdP.
 */
const FREE_MAIL: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)('email-providers/all.json') as string[]).map((d) => d.toLowerCase()),
);

/**
 * Why an organization may not claim this e-mail domain, or undefined when it may: a public suffix of the Public
 * Suffix List (its ICANN and private sections: `co.uk`, `github.io`), something that is no domain name, or a
 * free-mail provider.
 */
export function domainRefusal(domain: string): string | undefined {
  const parsed = parse(domain, { allowPrivateDomains: true });
  if (parsed.isIp || !parsed.hostname || parsed.hostname !== domain) return `${domain} is not a domain name`;
  if (!parsed.publicSuffix || !parsed.domain) {
    return `${domain} is a public suffix: addresses under it belong to many owners`;
  }
  if (FREE_MAIL.has(domain) || FREE_MAIL.has(parsed.domain)) {
    return `${domain} is a public mail provider: its addresses belong to many owners`;
  }
  return undefined;
}

/**
 * The name of the TXT record that proves a claim on `domain` (docs/identity-administrators.md,
 * "Proving a domain by DNS").
 */
export const challengeRecordName = (domain: string): string => `_governance-challenge.${domain}`;
