/** The OpenAPI text of the SSO configuration routes (sso-config.controller.ts), kept out of the controller. */

const WHO = 'Owner or admin, on plans with `sso` (Governance and above).';
const OWNER =
  'Owner only, on plans with `sso` (Governance and above): the IdP and its role mapping can sign members in and ' +
  'grant the owner role, so an admin may read the configuration but not write it.';

export const SSO_CONFIG_DOCS = {
  get:
    `${WHO} The client secret is never shown (\`clientSecretSet\`); the SAML certificate shows as its subject, ` +
    'validity and fingerprint. Also answers what to register at the IdP: the OIDC redirect URI, or the SAML ' +
    'entity id, ACS URL and metadata URL. 404 when SSO is not configured.',
  put:
    `${OWNER} Replaces the configuration; does not contact the IdP (see the test). Each e-mail domain belongs to ` +
    'one organization at most (409 SSO_DOMAIN_TAKEN). Role-mapping patterns are RE2, at most 256 characters. ' +
    'IdP URLs must be https (`SSO_ALLOW_INSECURE_HTTP` lets http through outside production). Writes ' +
    '`sso.config.update`.',
  remove: `${OWNER} Frees its e-mail domains. Writes \`sso.config.delete\`.`,
  test:
    `${WHO} OIDC: the issuer's address, discovery (the issuer must match), the code flow, PKCE S256 and the ` +
    'JWKS. SAML: the certificate, its validity now, and the addresses of the entry point and logout URL. ' +
    'Answers `{ok, checks: [{name, ok, detail}]}`; a failing check is not an error.',
} as const;
