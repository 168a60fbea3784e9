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
  /** Sign-in through the SSO is enforced for the verified domains (absent in configurations written before it). */
  enforceSso?: boolean;
  /**
   * The last `POST /sso/config/test` of these IdP settings: the settings' fingerprint and, when it passed, when.
   * A PUT that changes the settings drops it.
   */
  lastTest?: { fingerprint: string; passedAt: string | null };
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
