import { inflateRawSync } from 'node:zlib';

/**
 * Signature algorithms taken on the HTTP-Redirect binding. SHA-1 is refused (Entra ID, Okta and Google Workspace
 * sign with RSA-SHA256 by default).
 */
export const REDIRECT_SIG_ALGS: ReadonlySet<string> = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);
/** The query parameters of the HTTP-Redirect binding (SAML bindings §3.4.4); any other is ignored. */
const REDIRECT_PARAMS: ReadonlySet<string> = new Set([
  'SAMLRequest',
  'SAMLResponse',
  'RelayState',
  'SigAlg',
  'Signature',
]);
/** A deflated, base64 message of a redirect is at most this long (browsers and proxies cut longer URLs anyway). */
export const REDIRECT_MESSAGE_MAX_CHARS = 16 * 1024;

/** A query parameter of the HTTP-Redirect binding: as sent (the signature covers these octets) and decoded. */
export interface RedirectParam {
  name: string;
  raw: string;
  value: string;
}

/**
 * The binding's parameters from the raw query string, each at most once: a repeated one is refused, since which
 * copy was signed would be ambiguous. Throws an Error naming what is wrong.
 */
export function redirectParams(rawQuery: string): Map<string, RedirectParam> {
  const params = new Map<string, RedirectParam>();
  for (const token of rawQuery.split('&')) {
    const eq = token.indexOf('=');
    const name = eq < 0 ? token : token.slice(0, eq);
    if (!REDIRECT_PARAMS.has(name)) continue;
    if (params.has(name)) throw new Error(`${name} is given more than once`);
    const raw = eq < 0 ? '' : token.slice(eq + 1);
    let value: string;
    try {
      value = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      throw new Error(`${name} is not URL-encoded`);
    }
    params.set(name, { name, raw, value });
  }
  return params;
}

/**
 * What a redirect's `Signature` signs: `SAMLRequest=…` or `SAMLResponse=…`, then `RelayState=…` when present, then
 * `SigAlg=…`, each exactly as sent (SAML bindings §3.4.4.1).
 */
export function signedRedirectOctets(
  message: RedirectParam,
  relayState: RedirectParam | undefined,
  sigAlg: RedirectParam,
): string {
  return [message, relayState, sigAlg]
    .filter((p): p is RedirectParam => p !== undefined)
    .map((p) => `${p.name}=${p.raw}`)
    .join('&');
}

/**
 * A message of the HTTP-Redirect binding (base64 of raw DEFLATE) inflated to at most `maxBytes`: a small query
 * cannot expand into a large document. Throws an Error naming what is wrong.
 */
export function inflateRedirectMessage(encoded: string, maxBytes: number): string {
  if (encoded.length > REDIRECT_MESSAGE_MAX_CHARS || !/^[A-Za-z0-9+/=\r\n]+$/.test(encoded)) {
    throw new Error('The message is not base64');
  }
  let inflated: Buffer;
  try {
    inflated = inflateRawSync(Buffer.from(encoded, 'base64'), { maxOutputLength: maxBytes });
  } catch (err) {
    throw new Error(err instanceof RangeError ? 'The message is too large' : 'The message is not deflated', {
      cause: err,
    });
  }
  if (inflated.length === 0) throw new Error('The message is empty');
  return inflated.toString('utf8');
}
