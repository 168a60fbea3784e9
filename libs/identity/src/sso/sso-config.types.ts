import type { RoleMappingRule } from './role-mapping.js';

export type SsoProvider = 'oidc' | 'saml';

/** OIDC settings as stored: the client secret sealed with the SecretBox. */
export interface StoredOidcSettings {
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  scopes: string[];
  groupsClaim: string;
}

/** SAML settings as stored: the IdP's signing certificate in PEM. */
export interface StoredSamlSettings {
  entryPoint: string;
  idpCertificate: string;
  idpIssuer: string | null;
  groupsAttribute: string;
  logoutUrl: string | null;
}

/** `organizations.sso_config`: the provider and its settings (the domains are rows of sso_domains). */
export interface StoredSsoConfig {
  provider: SsoProvider;
  requireMfaEvenWithSso: boolean;
  oidc?: StoredOidcSettings;
  saml?: StoredSamlSettings;
  updatedAt: string;
  updatedBy: string | null;
}

/** An organization's SSO configuration, read whole. */
export interface SsoSettings {
  config: StoredSsoConfig;
  emailDomains: string[];
  roleMappingRules: RoleMappingRule[];
}
