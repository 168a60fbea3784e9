import type { ApiQueryOptions } from '@nestjs/swagger';
import { objectIdParam } from '#platform';

/** The OpenAPI text of the SAML routes (saml.controller.ts), kept out of the controller. */

export const ORGANIZATION_ID = objectIdParam('orgId', 'Organization id');

/** What the public routes taking an organization id answer when it does not sign in with SAML. */
const NO_SAML =
  'Any organization that does not sign in with SAML now (unknown, malformed id, deleted, without SSO, on a plan ' +
  'without `sso`, or with OIDC) gets one and the same 404, and no sooner than 40 ms, so that a stranger cannot ' +
  'tell these cases apart.';
const NO_SAML_ERROR = 'NOT_FOUND, the same body whatever the reason';
const MESSAGE_INVALID = { 400: 'SAML_MESSAGE_INVALID: unsigned, wrongly signed, malformed or unknown' };

const SAML_FORM_SCHEMA = {
  type: 'object' as const,
  properties: {
    SAMLResponse: { type: 'string' as const, description: 'The base64 SAML message.' },
    SAMLRequest: { type: 'string' as const, description: 'An IdP-initiated LogoutRequest (logout only).' },
    RelayState: { type: 'string' as const },
  },
};

/** A SAML message posted as a form (the HTTP-POST binding). */
export const SAML_FORM = {
  consumes: ['application/x-www-form-urlencoded'],
  body: { schema: SAML_FORM_SCHEMA },
};

export const METADATA_PRODUCES = ['application/samlmetadata+xml'];

/** The HTTP-Redirect binding's LogoutResponse, listed as stacked decorators would be (the document: last first). */
export const LOGOUT_REDIRECT_QUERY: ApiQueryOptions[] = [
  { name: 'SAMLResponse', required: true, type: String, description: 'Deflated, then base64.' },
  { name: 'RelayState', required: false, type: String },
  {
    name: 'SigAlg',
    required: true,
    type: String,
    example: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  },
  { name: 'Signature', required: true, type: String, description: 'Base64.' },
];

export const SAML_DOCS = {
  initiate:
    '`{redirectUrl}`: the organization’s IdP entry point carrying a deflated AuthnRequest (HTTP-Redirect binding, ' +
    'signed in the query when `SAML_SP_SIGNING_KEY` is set). Its id is kept 10 minutes; the response must answer ' +
    'it, from this browser: the cookie `svc_saml_binding` (httpOnly, `SameSite=None; Secure`, 10 minutes) ties ' +
    `them. Call it with credentials. ${NO_SAML}`,
  callback:
    'The IdP posts `SAMLResponse` as a form (≤ 5 MB). Its InResponseTo must name an AuthnRequest of the ' +
    'organization sent within 10 minutes to this browser (the `svc_saml_binding` cookie), once. Required: a signed response or a signed assertion (the ' +
    'organization’s IdP certificate; signature wrapping refused), the audience (the SP entity id), the ' +
    'Destination and the bearer confirmation’s Recipient (this URL), the time window with a minute of skew, and ' +
    'an assertion id never accepted before. Encrypted assertions are decrypted when `SAML_SP_DECRYPTION_KEY` is ' +
    'set. The e-mail is the NameID in e-mail format or the `email` attribute; groups come from `groupsAttribute`. ' +
    'Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (or `APP_URL/login?' +
    'ssoMfa=1` with `svc_sso_mfa`); any failure: 302 to `APP_URL/login?error=sso_failed` and no cookie.',
  metadata:
    'The SP entity id (this URL), the ACS (`/auth/saml/callback`, HTTP-POST), the single-logout service, the ' +
    'NameID format (e-mail), the signing certificate when `SAML_SP_SIGNING_KEY` is set, and an encryption key only ' +
    `when \`SAML_SP_DECRYPTION_KEY\` is set. ${NO_SAML}`,
  logoutInitiate:
    'Revokes the caller’s session at once (`auth.logout`), then answers `{redirectUrl}`: the organization’s ' +
    '`saml.logoutUrl` with a LogoutRequest for the SAML session (signed when `SAML_SP_SIGNING_KEY` is set), or ' +
    '`APP_URL/login?logout=1` when the session was not opened by SAML or no logout URL is configured.',
  logoutRedirect:
    'The IdP’s LogoutResponse answering a LogoutRequest of this service, on the HTTP-Redirect binding (Entra ID ' +
    'answers SP-initiated logout so): `SAMLResponse` (deflated, base64), `RelayState` if any, `SigAlg` ' +
    '(RSA-SHA256, RSA-SHA384 or RSA-SHA512; SHA-1 refused) and `Signature`, which must verify over ' +
    '`SAMLResponse=…[&RelayState=…]&SigAlg=…` as sent, with the organization’s IdP certificate. Then as on the ' +
    'POST binding: its Destination is this URL, its status a success, its issuer `idpIssuer` when set, its ' +
    'InResponseTo a pending request, answered once → 302 to `APP_URL/login?logout=1`. An unsigned, wrongly ' +
    'signed, malformed (a parameter twice, not deflated, over 64 KB inflated) or unknown message answers 400 ' +
    'SAML_MESSAGE_INVALID; so does an IdP-initiated `SAMLRequest`, taken on the POST binding only.',
  logoutCallback:
    'Either the IdP’s signed `SAMLResponse` (a LogoutResponse answering a LogoutRequest of this service, once) → ' +
    '302 to `APP_URL/login?logout=1`; or an IdP-initiated signed `SAMLRequest` (LogoutRequest) → every session ' +
    'of that user in that organization revoked, then 302 to the IdP’s logout URL with a LogoutResponse. An ' +
    'unsigned, wrongly signed, malformed or unknown message answers 400 SAML_MESSAGE_INVALID.',
} as const;

/** Answers other than the envelope: redirects and the metadata document. */
export const SAML_RESPONSES = {
  callback: [{ status: 302, description: 'To the dashboard: signed in, MFA next, or `error=sso_failed`.' }],
  metadata: [
    {
      status: 200,
      description: 'The EntityDescriptor.',
      content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
    },
  ],
  logoutRedirect: [{ status: 302, description: 'To the dashboard’s login page (`?logout=1`).' }],
  logoutCallback: [{ status: 302, description: 'To the dashboard’s login page, or back to the IdP.' }],
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const SAML_ERRORS = {
  noSaml: { 404: NO_SAML_ERROR },
  messageInvalid: MESSAGE_INVALID,
} as const;
