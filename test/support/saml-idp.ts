import { createSign, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { encrypt } from 'xml-encryption';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', name), 'utf8');

/** A key pair shipped with the tests (see test/fixtures/README.md). */
export interface TestKeyPair {
  key: string;
  cert: string;
}
export const IDP_KEYS: TestKeyPair = { key: fixture('saml-idp.key.pem'), cert: fixture('saml-idp.cert.pem') };
export const OTHER_KEYS: TestKeyPair = {
  key: fixture('saml-other.key.pem'),
  cert: fixture('saml-other.cert.pem'),
};
export const SP_KEYS: TestKeyPair = { key: fixture('saml-sp.key.pem'), cert: fixture('saml-sp.cert.pem') };

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();
const xmlId = () => `_${randomBytes(16).toString('hex')}`;
const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A SAML message on the HTTP-Redirect binding, read back: its XML and the query it came with. */
export function readRedirect(url: string, param: 'SAMLRequest' | 'SAMLResponse' = 'SAMLRequest') {
  const parsed = new URL(url);
  const encoded = parsed.searchParams.get(param);
  if (!encoded) throw new Error(`${param} missing from ${url}`);
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1];
  return { url: parsed, xml, id: attr('ID')!, attr };
}

/** The signature algorithms of the HTTP-Redirect binding, by the hash Node names them with. */
export const REDIRECT_SIG_ALG = {
  'RSA-SHA1': 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  'RSA-SHA256': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'RSA-SHA512': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
} as const;

export interface RedirectOptions {
  param?: 'SAMLRequest' | 'SAMLResponse';
  relayState?: string;
  /** The signing key (default the IdP's); null sends the message unsigned (no SigAlg, no Signature). */
  keys?: TestKeyPair | null;
  hash?: keyof typeof REDIRECT_SIG_ALG;
}

/**
 * The query string of a SAML message on the HTTP-Redirect binding, as an IdP (Entra ID) sends it: the XML deflated,
 * base64 and URL-encoded, then `RelayState` if any, then `SigAlg` and a `Signature` over
 * `SAMLResponse=…[&RelayState=…]&SigAlg=…` as encoded (SAML bindings §3.4.4.1), unless `keys` is null.
 */
export function redirectQuery(xml: string, o: RedirectOptions = {}): string {
  const parts = [
    `${o.param ?? 'SAMLResponse'}=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`,
  ];
  if (o.relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(o.relayState)}`);
  if (o.keys === null) return parts.join('&');
  const hash = o.hash ?? 'RSA-SHA256';
  parts.push(`SigAlg=${encodeURIComponent(REDIRECT_SIG_ALG[hash])}`);
  const signature = createSign(hash)
    .update(parts.join('&'))
    .sign((o.keys ?? IDP_KEYS).key, 'base64');
  parts.push(`Signature=${encodeURIComponent(signature)}`);
  return parts.join('&');
}

/**
 * Signs the element `xpath` of `xml` with an enveloped RSA-SHA256 signature, placed after that element's Issuer:
 * what an identity provider does to a response or an assertion.
 */
export function sign(xml: string, xpath: string, keys: TestKeyPair = IDP_KEYS): string {
  const signer = new SignedXml({
    privateKey: keys.key,
    publicCert: keys.cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signer.addReference({
    xpath,
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: [
      'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    ],
  });
  signer.computeSignature(xml, {
    location: { reference: `${xpath}/*[local-name(.)='Issuer']`, action: 'after' },
  });
  return signer.getSignedXml();
}

export const ASSERTION_XPATH = "//*[local-name(.)='Assertion']";
export const RESPONSE_XPATH = "/*[local-name(.)='Response']";

export interface AssertionOptions {
  email: string;
  inResponseTo: string;
  audience: string;
  recipient: string;
  groups?: string[];
  name?: string;
  nameIdFormat?: string;
  sessionIndex?: string;
  /** NotOnOrAfter of the conditions and the confirmation, from now (default five minutes). */
  validForMs?: number;
  id?: string;
  issuer?: string;
}

/**
 * A SAML identity provider played by the test: it reads the service's AuthnRequests and LogoutRequests from the
 * redirect URLs, and writes responses, assertions and logout messages, signed with `xml-crypto` by its key (or
 * another), or not at all, and encrypted with `xml-encryption` for the SP's certificate.
 */
export class SamlIdp {
  readonly entityId = 'https://idp.saml-test.example/metadata';
  readonly entryPoint = 'https://idp.saml-test.example/sso';
  readonly logoutUrl = 'https://idp.saml-test.example/slo';

  assertion(o: AssertionOptions): string {
    const groups = (o.groups ?? [])
      .map((g) => `<saml:AttributeValue>${escape(g)}</saml:AttributeValue>`)
      .join('');
    const until = iso(o.validForMs ?? 5 * 60_000);
    return (
      `<saml:Assertion xmlns:saml="${ASSERTION}" ID="${o.id ?? xmlId()}" Version="2.0" IssueInstant="${iso()}">` +
      `<saml:Issuer>${escape(o.issuer ?? this.entityId)}</saml:Issuer>` +
      `<saml:Subject><saml:NameID Format="${o.nameIdFormat ?? EMAIL_FORMAT}">${escape(o.email)}</saml:NameID>` +
      `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
      `<saml:SubjectConfirmationData InResponseTo="${o.inResponseTo}" NotOnOrAfter="${until}" Recipient="${escape(o.recipient)}"/>` +
      `</saml:SubjectConfirmation></saml:Subject>` +
      `<saml:Conditions NotBefore="${iso(-60_000)}" NotOnOrAfter="${until}">` +
      `<saml:AudienceRestriction><saml:Audience>${escape(o.audience)}</saml:Audience></saml:AudienceRestriction>` +
      `</saml:Conditions>` +
      `<saml:AuthnStatement AuthnInstant="${iso()}" SessionIndex="${o.sessionIndex ?? xmlId()}">` +
      `<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext>` +
      `</saml:AuthnStatement>` +
      `<saml:AttributeStatement>` +
      (groups ? `<saml:Attribute Name="groups">${groups}</saml:Attribute>` : '') +
      (o.name
        ? `<saml:Attribute Name="name"><saml:AttributeValue>${escape(o.name)}</saml:AttributeValue></saml:Attribute>`
        : '') +
      `</saml:AttributeStatement></saml:Assertion>`
    );
  }

  /** A Response around `inner` (an assertion, signed or not, encrypted or not). */
  response(o: { inResponseTo: string; destination: string; inner: string; id?: string }): string {
    return (
      `<samlp:Response xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${o.id ?? xmlId()}" Version="2.0" ` +
      `IssueInstant="${iso()}" Destination="${escape(o.destination)}" InResponseTo="${o.inResponseTo}">` +
      `<saml:Issuer>${this.entityId}</saml:Issuer>` +
      `<samlp:Status><samlp:StatusCode Value="${SUCCESS}"/></samlp:Status>` +
      o.inner +
      `</samlp:Response>`
    );
  }

  /** An assertion encrypted for the SP's certificate, as an EncryptedAssertion. */
  async encrypted(assertion: string, spCert: string): Promise<string> {
    const publicKey = new X509Certificate(spCert).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const data = await new Promise<string>((resolve, reject) =>
      encrypt(
        assertion,
        {
          rsa_pub: publicKey,
          pem: spCert,
          encryptionAlgorithm: 'http://www.w3.org/2009/xmlenc11#aes256-gcm',
          keyEncryptionAlgorithm: 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
          disallowEncryptionWithInsecureAlgorithm: true,
        },
        (err, result) => (err ? reject(err) : resolve(result)),
      ),
    );
    return `<saml:EncryptedAssertion xmlns:saml="${ASSERTION}">${data}</saml:EncryptedAssertion>`;
  }

  /** The LogoutResponse answering the service's LogoutRequest `inResponseTo`. */
  logoutResponse(o: { inResponseTo: string; destination: string; status?: string }): string {
    return (
      `<samlp:LogoutResponse xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${xmlId()}" Version="2.0" ` +
      `IssueInstant="${iso()}" Destination="${escape(o.destination)}" InResponseTo="${o.inResponseTo}">` +
      `<saml:Issuer>${this.entityId}</saml:Issuer>` +
      `<samlp:Status><samlp:StatusCode Value="${o.status ?? SUCCESS}"/></samlp:Status>` +
      `</samlp:LogoutResponse>`
    );
  }

  /** An IdP-initiated LogoutRequest for `nameId`. */
  logoutRequest(o: { nameId: string; destination: string; sessionIndex?: string }): string {
    return (
      `<samlp:LogoutRequest xmlns:samlp="${PROTOCOL}" xmlns:saml="${ASSERTION}" ID="${xmlId()}" Version="2.0" ` +
      `IssueInstant="${iso()}" Destination="${escape(o.destination)}" NotOnOrAfter="${iso(5 * 60_000)}">` +
      `<saml:Issuer>${this.entityId}</saml:Issuer>` +
      `<saml:NameID Format="${EMAIL_FORMAT}">${escape(o.nameId)}</saml:NameID>` +
      (o.sessionIndex ? `<samlp:SessionIndex>${escape(o.sessionIndex)}</samlp:SessionIndex>` : '') +
      `</samlp:LogoutRequest>`
    );
  }
}

/** A form body of the HTTP-POST binding. */
export function samlForm(fields: Record<string, string>): string {
  return new URLSearchParams(
    Object.fromEntries(
      Object.entries(fields).map(([k, v]) =>
        k === 'RelayState' ? [k, v] : [k, Buffer.from(v, 'utf8').toString('base64')],
      ),
    ),
  ).toString();
}
