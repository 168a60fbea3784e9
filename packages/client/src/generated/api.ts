/**
 * Generated from the OpenAPI document (openapi.json) by tools/client/generate.mjs: do not edit.
 * Run `npm run openapi && npm run client:generate` after a change of the API.
 */

export interface paths {
  '/api/v1/health': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Liveness, database and event-loop checks
     * @description Also served at `/health`. Answers within 100 ms when the service is not saturated; 503 SERVICE_UNAVAILABLE (with `checks`) when the database does not answer within 250 ms. A slow event loop (CPU-bound work) is reported as `checks.eventLoop: slow`, not as a database failure.
     */
    get: operations['getHealth'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/health/live': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Liveness: the process answers
     * @description Also served at `/health/live`. The liveness probe: 200 whenever the process can answer a request, whatever the state of the database (a replica is not restarted because PostgreSQL is away; readiness takes it out of rotation instead).
     */
    get: operations['getLiveness'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/health/ready': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Readiness: database reachable, migrations current, not draining
     * @description Also served at `/health/ready`. The readiness probe for a load balancer: 200 when the database answers within 250 ms, holds every migration this build knows, and the process is not draining; 503 SERVICE_UNAVAILABLE with `checks` otherwise. From SIGTERM on it answers 503 while requests are still served for `SHUTDOWN_DRAIN_MS`, so that the balancer routes new requests elsewhere before the process closes.
     */
    get: operations['getReadiness'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/versions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Schema-version registry
     * @description Versions selectable with the `X-Svc-Version` request header, with status, sunset date and trace limits.
     */
    get: operations['listSchemaVersions'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/register': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign up in one call
     * @description Creates the user, an organization on the default plan with the user as owner, and a session. Writes `auth.register`.
     */
    post: operations['register'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Log in with e-mail and password
     * @description Writes `auth.login` with `metadata.method = "password"`. The session opens in the oldest active membership whose organization does not enforce SSO for the address. When every one does, 403 `SSO_REQUIRED`, except for an owner with TOTP: the break-glass path answers the MFA step, and `mfa/login` writes `auth.sso_break_glass` and mails the other owners.
     */
    post: operations['login'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/logout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Log out
     * @description Blacklists the caller’s jti for its remaining lifetime. Writes `auth.logout`.
     */
    post: operations['logout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/me': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller, the active organization and the role in it */
    get: operations['getMe'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/request-signup': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign up with e-mail verification
     * @description Always 202 with the same body. A new address receives a confirmation link (valid 24 hours); an address that already has an account receives a note instead. No JWT is returned.
     */
    post: operations['requestSignup'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/complete-signup': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Finish e-mail sign-up
     * @description Exchanges the confirmation token for the first JWT. Writes `auth.register`.
     */
    post: operations['completeSignup'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/forgot-password': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Ask for a password-reset link
     * @description Always 200 with the same body and timing. An existing account receives a link valid one hour, single use. An address whose domain an organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with `details.ssoUrl` instead (decided by the domain alone, whether or not an account exists).
     */
    post: operations['forgotPassword'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/reset-password': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Set a new password with a reset token
     * @description Revokes every session of the user. Writes `auth.password_reset`. 403 `SSO_REQUIRED` when the address’s organization has enforced SSO since the link was sent.
     */
    post: operations['resetPassword'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/change-password': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Change the password
     * @description Needs the current password; revokes every other session of the user. Writes `auth.password_changed`.
     */
    post: operations['changePassword'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/magic-link': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Ask for a sign-in link
     * @description Always 200 with the same body. The link is valid 15 minutes, single use. An address whose domain an organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with `details.ssoUrl` instead (decided by the domain alone).
     */
    post: operations['requestMagicLink'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/magic-link/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign in with a magic-link token
     * @description Answers as login. Writes `auth.login` with `metadata.method = "magic_link"`. The session opens in the oldest membership whose organization does not enforce SSO for the address; 403 `SSO_REQUIRED` when none.
     */
    post: operations['verifyMagicLink'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/passkeys/registration/options': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Passkey registration options (not available) */
    post: operations['getPasskeyRegistrationOptions'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/passkeys/registration/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Passkey registration (not available) */
    post: operations['verifyPasskeyRegistration'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/passkeys/authentication/options': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Passkey authentication options (not available) */
    post: operations['getPasskeyAuthenticationOptions'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/passkeys/authentication/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Passkey authentication (not available) */
    post: operations['verifyPasskeyAuthentication'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/passkeys/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Delete a passkey (not available) */
    delete: operations['deletePasskey'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/trusted-devices/{deviceId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /** Forget a trusted device (not available) */
    delete: operations['forgetTrustedDevice'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/account/unlock-request': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Request an account unlock (not available) */
    post: operations['requestAccountUnlock'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/password-history/check': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Check a password against history (not available) */
    post: operations['checkPasswordHistory'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/verify-email': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Verify an e-mail address (not available; use complete-signup) */
    post: operations['verifyEmail'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/resend-verification': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Resend a verification e-mail (not available; use request-signup) */
    post: operations['resendVerificationEmail'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/organizations/current': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller’s active organization, with its plan and features */
    get: operations['getCurrentOrganization'];
    put?: never;
    post?: never;
    /**
     * Delete the active organization (owner only)
     * @description Body `{confirmName}`, which must equal the organization’s name exactly (else 400 `VALIDATION_ERROR` and nothing changes). From the answer on, every session, membership, workspace key, agent key and pending invitation of the organization is refused (401). Its data is erased after `ORG_DELETION_GRACE_DAYS` (default 30, `eraseAfter`); until then the operator can restore it (`org:restore`) and export it (`org:export`). Writes `organization.delete_requested`.
     */
    delete: operations['deleteCurrentOrganization'];
    options?: never;
    head?: never;
    /**
     * Rename the active organization, or set its trace retention, contest contact or PII masking
     * @description Owner or admin. `name`, `traceRetentionDays` (at least 183, or null to keep traces for ever; the scheduler purges older traces daily) and/or `contestContact` (whom a person contests a decision with, shown in GET /traces/{id}/explanation; 1 to 500 characters, or null) and/or `piiMasking` (`{entities, mode}`: the PII types masked in the content of every trace stored from then on, `redact` or `hash`; null turns it off; docs/data-protection.md, "Masking at ingestion"). Writes `organization.updated` with the changes of the first three, and `organization.pii_masking_updated` with `{from, to}` for masking.
     */
    patch: operations['updateCurrentOrganization'];
    trace?: never;
  };
  '/api/v1/billing/plan': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The organization’s plan
     * @description Any role. `{plan, features}`.
     */
    get: operations['getBillingPlan'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/billing/checkout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Start a payment checkout (not available)
     * @description Owner or admin. `{available: false, message}` until a payment provider is configured.
     */
    post: operations['createBillingCheckout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/billing/portal': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Open the customer portal (not available)
     * @description Owner or admin. `{available: false, message}` until a payment provider is configured.
     */
    post: operations['openBillingPortal'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/mfa/setup': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Start MFA setup
     * @description Generates a TOTP secret (SHA-1, 6 digits, 30 s) and its QR code. The secret is stored encrypted and is not active until `/auth/mfa/enable` proves a code; calling setup again replaces a pending secret.
     */
    post: operations['setUpMfa'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/mfa/enable': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Enable MFA
     * @description Verifies a code from the pending secret, turns MFA on and returns ten single-use backup codes, shown only here. Writes `auth.mfa_enabled`.
     */
    post: operations['enableMfa'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/mfa/disable': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Disable MFA
     * @description Needs a TOTP code or an unused backup code. Deletes the secret and every backup code. Writes `auth.mfa_disabled` with `metadata.factor`.
     */
    post: operations['disableMfa'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/mfa/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Finish a login with the second factor
     * @description Exchanges the `tempToken` from `/auth/login` (or the SSO hand-off) and a TOTP or unused backup code for a session. Writes `auth.login` with the first factor’s `metadata.method`, `metadata.mfa = true` and `metadata.mfaFactor` (`totp` or `backup_code`); a wrong code writes `auth.login_failed` with `metadata.reason = "invalid_mfa_code"`. The tempToken stays usable for its 5 minutes, always with a fresh code. After 10 wrong codes for one user within 15 minutes, from any address, further attempts get 429 `RATE_LIMIT_EXCEEDED` with `Retry-After`. The break-glass step of an owner of an organization that enforces SSO also writes `auth.sso_break_glass` (and `metadata.breakGlass = true` on `auth.login`) and mails every other owner; a tempToken of any other first factor into such an organization answers 403 `SSO_REQUIRED`.
     */
    post: operations['loginWithMfa'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/backup-codes/generate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Replace the backup codes
     * @description Needs a TOTP code (not a backup code). Returns ten new codes; every earlier code, used or not, stops working. Writes `auth.backup_codes_generated`.
     */
    post: operations['generateBackupCodes'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/mfa/resend': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Resend an MFA code (informational)
     * @description Placeholder: TOTP codes come from the authenticator app and are never sent; returns a message.
     */
    post: operations['resendMfaCode'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/security-settings': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The caller’s security settings
     * @description MFA state, unused backup codes, password age. Trusted devices are not implemented (always empty).
     */
    get: operations['getSecuritySettings'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List workspace API keys
     * @description Owner or admin. Live (not revoked) keys, newest first, with their prefix only. limit default 50, max 100.
     */
    get: operations['listApiKeys'];
    put?: never;
    /**
     * Create a workspace API key
     * @description Owner or admin. Returns the `svc_live_` key once: only its SHA-256 is stored and it cannot be shown again. Send it as `X-API-Key`. Every id in `scope.agentIds` must be an agent of the caller’s organization: an unknown, deleted or other organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`scope.agentIds.0`), the same answer in each case, and nothing is stored. Writes `auth.key_created` (name, prefix and scope; never the key).
     */
    post: operations['createApiKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/keys/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Revoke a workspace API key
     * @description Owner or admin. The key is refused (401) from the next request on; it is kept, revoked, for the audit trail. Writes `auth.key_revoked`.
     */
    delete: operations['revokeApiKey'];
    options?: never;
    head?: never;
    /**
     * Rename a workspace API key or change its scope
     * @description Owner or admin. `scope` is merged: only the fields sent change (`agentIds: null` lifts the agent restriction). Every id in `scope.agentIds` must be an agent of the caller’s organization: an unknown, deleted or other organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`scope.agentIds.0`), the same answer in each case, and nothing is stored. Takes effect on the key’s next request. Writes `auth.key_updated` when something changed.
     */
    patch: operations['updateApiKey'];
    trace?: never;
  };
  '/api/v1/auth/stream-token': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Mint a stream token
     * @description Any role, user session only. 201: each call creates a new single-use token, valid 60 seconds, bound to the caller and the active organization. Present it as `?token=` when opening `GET /events/stream`; a JWT never travels in a URL.
     */
    post: operations['createStreamToken'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/refresh': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Exchange the current token for a new one
     * @description Mints a token with a new jti (same organization, the user’s current session timeout) and revokes the presented jti at once: a token can be refreshed once. Writes `auth.token_refreshed`, whose id is the new session id. Once the organization enforces its SSO for the caller’s address, a session its SSO did not open is not renewed (403 `SSO_REQUIRED`), except an owner’s.
     */
    post: operations['refreshSession'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/revoke-sessions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Revoke every session of the caller
     * @description Blacklists every live jti of the user, in every organization, the current one included. Writes `auth.session_revoked` with `metadata.all = true` and the count.
     */
    post: operations['revokeAllSessions'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/revoke-session': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Revoke one session of the caller
     * @description `sessionId` is the id of the audit entry that opened the session (as listed by GET /auth/sessions). `revoked` is 1, or 0 when the session was already revoked or has expired. Writes `auth.session_revoked`.
     */
    post: operations['revokeSession'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/sessions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The caller’s live sessions
     * @description Unexpired, unrevoked sessions of the user in every organization, newest first, at most 100.
     */
    get: operations['listSessions'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/me/session-timeout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Set the lifetime of the caller’s future tokens
     * @description Applies to tokens minted afterwards (login, refresh, switch-org); tokens already issued keep their expiry. Writes `auth.session_timeout_changed` when the value changes.
     */
    patch: operations['setSessionTimeout'];
    trace?: never;
  };
  '/api/v1/auth/me/orgs': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The organizations the caller belongs to
     * @description Organizations with an active membership of the caller, oldest membership first.
     */
    get: operations['listMyOrganizations'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/switch-org': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Get a token for another organization of the caller
     * @description Mints a token bound to an organization where the caller’s membership is active; the presented token stays valid. Writes `auth.org_switched` in the target organization; its id is the new session id.
     */
    post: operations['switchOrganization'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/profile': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Update the caller’s name, locale or time zone
     * @description `locale` is a BCP 47 tag (stored in canonical form), `timezone` an IANA zone name. Writes `user.profile_updated` when something changes.
     */
    patch: operations['updateProfile'];
    trace?: never;
  };
  '/api/v1/auth/me/preferences': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The caller’s dashboard preferences */
    get: operations['getPreferences'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Merge into the caller’s dashboard preferences
     * @description The body is a JSON Merge Patch (RFC 7396): members merge recursively, `null` removes a member, other values replace. Patch and result are each limited to 16384 bytes of JSON and 8 levels of nesting. Returns the merged preferences. Writes `user.preferences_updated` naming the members touched.
     */
    patch: operations['updatePreferences'];
    trace?: never;
  };
  '/api/v1/auth/login-activity': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The caller’s login attempts
     * @description Successful and failed logins on the caller’s account, newest first; limit default 20, at most 100 (larger values are clamped).
     */
    get: operations['listLoginActivity'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/members': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List the members of the organization
     * @description Any role. Active and suspended members, oldest membership first. Paginated: limit default 100, max 200.
     */
    get: operations['listMembers'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/members/{userId}/role': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Change a member’s role
     * @description Owner or admin; only an owner may grant the owner role or change an owner. Several owners are allowed, but the organization always keeps one active owner. Takes effect on the member’s next request. Writes `team.member.role_changed` with `{from, to}` (nothing when the role is unchanged).
     */
    patch: operations['changeMemberRole'];
    trace?: never;
  };
  '/api/v1/team/members/{userId}/status': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Suspend a member
     * @description Owner or admin; only an owner may suspend an owner, and the last active owner cannot be suspended. The body is optional (`{isActive: false}` or none). The member’s open sessions get 401 ACCOUNT_DEACTIVATED and login skips this organization until reactivation. Writes `team.member.suspended` (nothing when already suspended).
     */
    patch: operations['suspendMember'];
    trace?: never;
  };
  '/api/v1/team/members/{userId}/reactivate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Reactivate a suspended member
     * @description Owner or admin; only an owner may reactivate an owner. The same membership, with its role, becomes active again. Writes `team.member.reactivated` (nothing when already active).
     */
    patch: operations['reactivateMember'];
    trace?: never;
  };
  '/api/v1/team/members/{userId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Remove a member
     * @description Owner or admin; only an owner may remove an owner, and the last active owner cannot be removed. Deletes the membership; the user account survives with its other organizations. The member’s sessions in this organization are refused from the next request. Writes `team.member.removed`.
     */
    delete: operations['removeMember'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invite': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Invite someone by e-mail
     * @description Owner or admin; only an owner may invite with role `owner`. Role defaults to `member`. The invitation expires 7 days after creation. The token is only e-mailed, as the link `APP_URL/invite/<token>`; the response never carries it. Writes `team.invite.created`.
     */
    post: operations['createInvitation'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invites': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List pending invitations
     * @description Owner or admin. Pending invitations that have not expired, newest first. Paginated: limit default 50, max 100.
     */
    get: operations['listInvitations'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invites/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Revoke an invitation
     * @description Owner or admin. The invitation is kept, revoked: validating its token answers `reason: "revoked"` and accepting it answers 404. Writes `team.invite.revoked`.
     */
    delete: operations['revokeInvitation'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invites/{id}/resend': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Resend an invitation
     * @description Owner or admin (an owner for an invitation with role `owner`). Mails the same token again and resets the expiry to 7 days from now; a pending invitation that has already expired can be resent. A revoked or accepted invitation is 404. Writes `team.invite.resent`.
     */
    post: operations['resendInvitation'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invites/validate/{token}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Check an invitation token
     * @description Public. `{valid: true, organizationName, role, inviterEmail}`, or `{valid: false, reason}` with reason `expired`, `revoked`, `used` or `not_found` (an invalid token never reveals the organization).
     */
    get: operations['validateInvitation'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/team/invites/{token}/accept': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Accept an invitation
     * @description The token is the credential for the mailbox only, so what else is needed depends on the account the invited address has:
     *
     *     - **none**: `{name, password}` (password policy applies) create it;
     *     - **an account whose address was proven** (`emailVerifiedAt`: a confirmed sign-up, a magic link, a reset, an earlier invitation, a verified social address): be signed in as that account (`Authorization: Bearer`, a session not scoped to another organization’s SSO) or send its `password`; else 401. `name` is not used;
     *     - **an account whose address was never proven** (a registration nobody confirmed, an account an IdP or SCIM created): the token is the proof. `{name, password}` are required and replace the account’s name and password; its TOTP and any social or SSO link are removed, and every session and outstanding e-mailed token of it is revoked.
     *
     *     A password sent is always checked (a wrong one is 401 INVALID_CREDENTIALS). Creates the membership with the invited role, marks the invitation accepted (single use), writes `team.invite.accepted` (`newUser`, `claimed`) and opens a session in the inviting organization (`auth.login` with method `invite`). An account with MFA enabled gets `{mfaRequired, tempToken}` instead, to finish with `/auth/mfa/login`. When the organization enforces its SSO for the invited address, the membership is created and the answer is 403 `SSO_REQUIRED`: the new member signs in through the IdP.
     */
    post: operations['acceptInvitation'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/config': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The SSO configuration
     * @description Owner or admin, on plans with `sso` (Governance and above). The client secret is never shown (`clientSecretSet`); the SAML certificate shows as its subject, validity and fingerprint. Also answers what to register at the IdP: the OIDC redirect URI, or the SAML entity id, ACS URL and metadata URL. 404 when SSO is not configured.
     */
    get: operations['getSsoConfig'];
    /**
     * Set the SSO configuration
     * @description Owner only, on plans with `sso` (Governance and above): the IdP and its role mapping can sign members in and grant the owner role, so an admin may read the configuration but not write it. Replaces the configuration; does not contact the IdP (see the test). Each e-mail domain belongs to one organization at most (409 SSO_DOMAIN_TAKEN). Role-mapping patterns are RE2, at most 256 characters. IdP URLs must be https (`SSO_ALLOW_INSECURE_HTTP` lets http through outside production). Writes `sso.config.update`.
     */
    put: operations['replaceSsoConfig'];
    post?: never;
    /**
     * Remove the SSO configuration
     * @description Owner only, on plans with `sso` (Governance and above): the IdP and its role mapping can sign members in and grant the owner role, so an admin may read the configuration but not write it. Frees its e-mail domains. Writes `sso.config.delete`.
     */
    delete: operations['deleteSsoConfig'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/config/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Test the SSO configuration against the IdP
     * @description Owner or admin, on plans with `sso` (Governance and above). OIDC: the issuer's address, discovery (the issuer must match), the code flow, PKCE S256 and the JWKS. SAML: the certificate, its validity now, and the addresses of the entry point and logout URL. Answers `{ok, checks: [{name, ok, detail}]}`; a failing check is not an error.
     */
    post: operations['testSsoConfig'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/domains': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The organization’s domain claims
     * @description Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to this organization’s IdP. Each domain with its state and the TXT record to publish.
     */
    get: operations['listSsoDomains'];
    put?: never;
    /**
     * Claim an e-mail domain
     * @description Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to this organization’s IdP. Answers a pending claim with the record to publish: TXT `_governance-challenge.<domain>` holding `record.value`. Claiming again answers the same claim. Several organizations may hold pending claims on one domain; the first to verify owns it. A public suffix (Public Suffix List) or a free-mail provider is 400. Writes `sso.domain.claimed`.
     */
    post: operations['claimSsoDomain'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/domains/{domain}/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Verify a domain claim by its DNS record
     * @description Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to this organization’s IdP. Looks the TXT record up now (the system resolver, or `SSO_DNS_SERVERS`). Found: the domain is `verified` and routes sign-in to this organization; writes `sso.domain.verified`. Verified by another organization first: 409 SSO_DOMAIN_TAKEN. Not found: 400 DOMAIN_NOT_VERIFIED with `record`.
     */
    post: operations['verifySsoDomain'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/domains/{domain}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    /**
     * Drop a domain claim
     * @description Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to this organization’s IdP. The claim goes, and with it the domain’s routing. Writes `sso.domain.removed`.
     */
    delete: operations['deleteSsoDomain'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/sso/initiate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Start SSO sign-in from an e-mail address
     * @description Always 200 `{redirectUrl}`: for an e-mail of an SSO domain, the IdP’s authorization URL (OIDC: code flow with PKCE S256, state and nonce, with the cookie `svc_sso_binding` that ties the sign-in to this browser for 10 minutes; SAML: the entry point carrying a deflated AuthnRequest on the HTTP-Redirect binding, with the cookie `svc_saml_binding` (`SameSite=None; Secure`, since the IdP posts back cross-site)); otherwise `APP_URL/login?sso=unavailable`. The answer depends on the domain only, never on whether an account exists. Call it with credentials, so that the browser keeps the cookie.
     */
    post: operations['initiateSso'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/sso/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The OIDC IdP’s return (browser redirect)
     * @description The redirect URI registered at the IdP. Takes the state once (it must come from this browser: the `svc_sso_binding` cookie), exchanges the code (PKCE) and checks the ID token (issuer, audience, expiry, nonce, signature; `none` refused), requires a verified e-mail of the organization’s SSO domains, and signs in a member or provisions an unknown e-mail (role from the mapping rules; an existing account that is not a member is refused). Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie, or, with `requireMfaEvenWithSso`, 302 to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Any failure: 302 to `APP_URL/login?error=sso_failed`, no session cookie. Writes `auth.login` with `metadata.method = "sso"`.
     */
    get: operations['handleSsoCallback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/oauth-token': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Take the session token a sign-in callback left in a cookie
     * @description Answers `{token}` from the httpOnly `svc_oauth_token` cookie and clears it (once). No cookie: 401. The token never appears in a URL.
     */
    get: operations['takeOAuthToken'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/sso/mfa-exchange': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Take the MFA tempToken of an SSO sign-in
     * @description With `requireMfaEvenWithSso`, the callback leaves a 5-minute tempToken in the httpOnly `svc_sso_mfa` cookie and sends the browser to `APP_URL/login?ssoMfa=1`. This answers `{tempToken}` and clears the cookie; post it with a TOTP code to `/auth/mfa/login`. No cookie: 401.
     */
    get: operations['takeSsoMfaToken'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/saml/initiate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Start SAML sign-in for an organization
     * @description `{redirectUrl}`: the organization’s IdP entry point carrying a deflated AuthnRequest (HTTP-Redirect binding, signed in the query when `SAML_SP_SIGNING_KEY` is set). Its id is kept 10 minutes; the response must answer it, from this browser: the cookie `svc_saml_binding` (httpOnly, `SameSite=None; Secure`, 10 minutes) ties them. Call it with credentials. Any organization that does not sign in with SAML now (unknown, malformed id, deleted, without SSO, on a plan without `sso`, or with OIDC) gets one and the same 404, and no sooner than 40 ms, so that a stranger cannot tell these cases apart.
     */
    post: operations['initiateSaml'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/saml/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * The assertion consumer service (HTTP-POST binding)
     * @description The IdP posts `SAMLResponse` as a form (≤ 5 MB). Its InResponseTo must name an AuthnRequest of the organization sent within 10 minutes to this browser (the `svc_saml_binding` cookie), once. Required: a signed response or a signed assertion (the organization’s IdP certificate; signature wrapping refused), the audience (the SP entity id), the Destination and the bearer confirmation’s Recipient (this URL), the time window with a minute of skew, and an assertion id never accepted before. Encrypted assertions are decrypted when `SAML_SP_DECRYPTION_KEY` is set. The e-mail is the NameID in e-mail format or the `email` attribute; groups come from `groupsAttribute`. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (or `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`); any failure: 302 to `APP_URL/login?error=sso_failed` and no cookie.
     */
    post: operations['handleSamlCallback'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/saml/metadata/{orgId}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The service provider metadata of an organization (XML)
     * @description The SP entity id (this URL), the ACS (`/auth/saml/callback`, HTTP-POST), the single-logout service, the NameID format (e-mail), the signing certificate when `SAML_SP_SIGNING_KEY` is set, and an encryption key only when `SAML_SP_DECRYPTION_KEY` is set. Any organization that does not sign in with SAML now (unknown, malformed id, deleted, without SSO, on a plan without `sso`, or with OIDC) gets one and the same 404, and no sooner than 40 ms, so that a stranger cannot tell these cases apart.
     */
    get: operations['getSamlMetadata'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/saml/logout/initiate': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * SP-initiated single logout
     * @description Revokes the caller’s session at once (`auth.logout`), then answers `{redirectUrl}`: the organization’s `saml.logoutUrl` with a LogoutRequest for the SAML session (signed when `SAML_SP_SIGNING_KEY` is set), or `APP_URL/login?logout=1` when the session was not opened by SAML or no logout URL is configured.
     */
    post: operations['initiateSamlLogout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/saml/logout/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Single-logout callback (HTTP-Redirect binding)
     * @description The IdP’s LogoutResponse answering a LogoutRequest of this service, on the HTTP-Redirect binding (Entra ID answers SP-initiated logout so): `SAMLResponse` (deflated, base64), `RelayState` if any, `SigAlg` (RSA-SHA256, RSA-SHA384 or RSA-SHA512; SHA-1 refused) and `Signature`, which must verify over `SAMLResponse=…[&RelayState=…]&SigAlg=…` as sent, with the organization’s IdP certificate. Then as on the POST binding: its Destination is this URL, its status a success, its issuer `idpIssuer` when set, its InResponseTo a pending request, answered once → 302 to `APP_URL/login?logout=1`. An unsigned, wrongly signed, malformed (a parameter twice, not deflated, over 64 KB inflated) or unknown message answers 400 SAML_MESSAGE_INVALID; so does an IdP-initiated `SAMLRequest`, taken on the POST binding only.
     */
    get: operations['handleSamlLogoutRedirect'];
    put?: never;
    /**
     * Single-logout callback (HTTP-POST binding)
     * @description Either the IdP’s signed `SAMLResponse` (a LogoutResponse answering a LogoutRequest of this service, once) → 302 to `APP_URL/login?logout=1`; or an IdP-initiated signed `SAMLRequest` (LogoutRequest) → every session of that user in that organization revoked, then 302 to the IdP’s logout URL with a LogoutResponse. An unsigned, wrongly signed, malformed or unknown message answers 400 SAML_MESSAGE_INVALID.
     */
    post: operations['handleSamlLogoutCallback'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/github': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Sign in with GitHub
     * @description Browser redirect (302) to GitHub (scope `read:user user:email`), with state and PKCE (S256) in the sealed httpOnly cookie `svc_oauth_state` (10 minutes). 404 when the provider is not configured.
     */
    get: operations['startGithubLogin'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/github/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * GitHub’s return (browser redirect)
     * @description Checks the state against the cookie, exchanges the code (PKCE), takes the e-mail (GitHub: the primary verified address; Google: only when verified), and signs in the user with that e-mail or creates one with an organization. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (7 days; `Secure; SameSite=None` in production), collected by `GET /auth/oauth-token`; a user with TOTP goes to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Failure: 302 to `APP_URL/login?error=oauth_failed`, or `error=sso_required` when the organization of every membership enforces its SSO for the address. Writes `auth.login` with `metadata.method = "oauth"` and the provider. No token in any URL.
     */
    get: operations['handleGithubCallback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/google': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Sign in with Google
     * @description Browser redirect (302) to Google, with state and PKCE (S256) in the sealed httpOnly cookie `svc_oauth_state` (10 minutes). 404 when the provider is not configured.
     */
    get: operations['startGoogleLogin'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/google/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Google’s return (browser redirect)
     * @description Checks the state against the cookie, exchanges the code (PKCE), takes the e-mail (GitHub: the primary verified address; Google: only when verified), and signs in the user with that e-mail or creates one with an organization. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (7 days; `Secure; SameSite=None` in production), collected by `GET /auth/oauth-token`; a user with TOTP goes to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Failure: 302 to `APP_URL/login?error=oauth_failed`, or `error=sso_required` when the organization of every membership enforces its SSO for the address. Writes `auth.login` with `metadata.method = "oauth"` and the provider. No token in any URL.
     */
    get: operations['handleGoogleCallback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/microsoft': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Sign in with Microsoft
     * @description Browser redirect (302) to Microsoft (`prompt=select_account`), with state and PKCE (S256) in the sealed httpOnly cookie `svc_oauth_state` (10 minutes). 404 when the provider is not configured.
     */
    get: operations['startMicrosoftLogin'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/auth/microsoft/callback': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Microsoft’s return (browser redirect)
     * @description Checks the state against the cookie, exchanges the code (PKCE), takes the e-mail (GitHub: the primary verified address; Google: only when verified), and signs in the user with that e-mail or creates one with an organization. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (7 days; `Secure; SameSite=None` in production), collected by `GET /auth/oauth-token`; a user with TOTP goes to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Failure: 302 to `APP_URL/login?error=oauth_failed`, or `error=sso_required` when the organization of every membership enforces its SSO for the address. Writes `auth.login` with `metadata.method = "oauth"` and the provider. No token in any URL.
     */
    get: operations['handleMicrosoftCallback'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/sso/scim-token': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Whether a SCIM token exists, when it was made and last used
     * @description Owner or admin, on plans with `scim` (Enterprise).
     */
    get: operations['getScimTokenStatus'];
    put?: never;
    /**
     * Generate the SCIM token
     * @description Owner only, on plans with `scim` (Enterprise): the token provisions, deactivates and re-roles members, owners included, so an admin may see whether it exists but not mint or revoke it. Answers the token once (`scim_` and 48 hexadecimal characters); only its SHA-256 is kept. A new token revokes the previous one at once (it then gets 401). Writes `scim.token.created`.
     */
    post: operations['rotateScimToken'];
    /**
     * Revoke the SCIM token
     * @description Owner only, on plans with `scim` (Enterprise): the token provisions, deactivates and re-roles members, owners included, so an admin may see whether it exists but not mint or revoke it. The token stops working at once. Writes `scim.token.revoked` when there was one.
     */
    delete: operations['revokeScimToken'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/ServiceProviderConfig': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** What this SCIM service provider supports (public) */
    get: operations['scimGetServiceProviderConfig'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/ResourceTypes': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The resource types, User and Group (public) */
    get: operations['scimListResourceTypes'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/ResourceTypes/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One resource type (public) */
    get: operations['scimGetResourceType'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/Schemas': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** The schemas of User and Group, with their attribute definitions (public) */
    get: operations['scimListSchemas'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/Schemas/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One schema, by its URN (public) */
    get: operations['scimGetSchema'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/Users': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List the organization’s users
     * @description Members of the token’s organization, oldest first. `filter`: every RFC 7644 operator (`eq ne co sw ew pr gt ge lt le`), `and`, `or`, `not`, parentheses, on userName, displayName, active, externalId, emails.value, name.givenName, name.familyName, meta.created, meta.lastModified (userName and names case-insensitive). Unparseable: 400 invalidFilter.
     */
    get: operations['scimListUsers'];
    put?: never;
    /**
     * Provision a user
     * @description Creates the account and its membership atomically. userName is the e-mail address (lower-cased); displayName falls back to the given and family names, then the address’s local part. The role comes from the body’s `groups[].display|value` and `roles[].value` against the organization’s role-mapping rules (default member). An address that already has an account: 409 uniqueness. Writes `scim.user.created`.
     */
    post: operations['scimCreateUser'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/Users/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One user (404 outside the organization) */
    get: operations['scimGetUser'];
    /**
     * Replace a user
     * @description A full replace: attributes left out are cleared (name, externalId, displayName, which then falls back) or reset (active: true). Writes `scim.user.updated`, and `scim.user.deactivated|reactivated` when active changes.
     */
    put: operations['scimReplaceUser'];
    post?: never;
    /**
     * Deprovision a user (soft)
     * @description The membership becomes inactive, as `active: false` (sign-in refused, open sessions get ACCOUNT_DEACTIVATED); the account is kept. Writes `scim.user.deactivated`.
     */
    delete: operations['scimDeleteUser'];
    options?: never;
    head?: never;
    /**
     * Change a user (PatchOp)
     * @description `Operations` of `add`, `replace`, `remove` (any case), on a path (userName, displayName, active, externalId, name.givenName, name.familyName, name, `emails[type eq "work"].value`), or without path with a partial user. All or nothing: one bad operation leaves the user unchanged. Booleans may be the strings "True"/"False"; a value may come as an object or a one-element array. Extension attributes and RFC 7643 attributes the service does not keep are ignored; a path naming nothing is 400 invalidValue.
     */
    patch: operations['scimPatchUser'];
    trace?: never;
  };
  '/scim/v2/Groups': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List the role buckets
     * @description The four fixed groups `owner`, `admin`, `member`, `reviewer` (the viewer role), with their members (at most 1,000 each; `excludedAttributes=members` leaves them out). `filter` on displayName, id or members.value.
     */
    get: operations['scimListGroups'];
    put?: never;
    /** Not supported: the groups are the four fixed role buckets (405) */
    post: operations['scimCreateGroup'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/scim/v2/Groups/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** One role bucket, with its members */
    get: operations['scimGetGroup'];
    /** Not supported: the groups are the four fixed role buckets (405) */
    put: operations['scimReplaceGroup'];
    post?: never;
    /** Not supported: the groups are the four fixed role buckets (405) */
    delete: operations['scimDeleteGroup'];
    options?: never;
    head?: never;
    /**
     * Add or remove members of a role bucket
     * @description `add` members (they get the bucket’s role), `remove` them (they become `member`) by value list or by the path `members[value eq "<id>"]`, or `replace` the list (Okta). All or nothing; the organization keeps an active owner (400). Renaming a bucket: 400 mutability. Writes `scim.group.updated`.
     */
    patch: operations['scimPatchGroup'];
    trace?: never;
  };
  '/api/v1/audit/public-key': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The keys that sign audit checkpoints
     * @description Public. Every Ed25519 key the service has signed checkpoints with, the current one and those before a rotation, as PEM and JWK. `keyId` is the key's RFC 7638 thumbprint.
     */
    get: operations['getAuditPublicKeys'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audit': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List audit entries
     * @description Newest first. Owner or admin. limit default 50, max 200. Without filters `pagination.total` is the chain's length; with filters the count stops after 10,000 matches beyond the page asked for, and `pagination.totalCapped: true` then marks `total` as a lower bound.
     */
    get: operations['listAuditEntries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audit/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Verify the hash chain
     * @description Recomputes each entry's hash and link in sequence order, streaming the chain in pages (memory does not grow with the log). Incremental: checks the entries after the prefix verified by the last run (whose entry must still carry the hash then verified), up to the head; `full=true` checks every entry from the first. Also checks the chain against its highest signed checkpoint. `brokenAt` names the first failure. `content=true` also checks every trace's stored content against the `metadata.contentHash` of its latest audit entry that records one (SHA-256 over the trace’s `contentSalt` and the RFC 8785 canonical JSON of `{inputContext, outputDecision, metadata, rationale}`), in one streamed pass whatever `full` says, and adds `contentChecked`, `contentAltered` (with up to 20 `contentAlteredIds`), `contentErased` and `contentUnhashed`. An altered trace leaves the chain valid: its content lies outside the chain, its hash inside.
     */
    get: operations['verifyAuditChain'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audit/checkpoints': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List signed checkpoints
     * @description Newest first. Owner or admin. limit default 50, max 200. Each is the chain head at a time, signed with Ed25519 (GET /audit/public-key); keep copies outside the operator (the `audit.checkpoint` webhook event) to prove later that the chain was neither rewritten nor cut.
     */
    get: operations['listAuditCheckpoints'];
    put?: never;
    /**
     * Sign the chain head now
     * @description Owner or admin. Verifies the chain up to its head (from the last verified prefix) and signs that head; a head already signed answers its checkpoint. A new checkpoint is also sent as the `audit.checkpoint` event. 409 AUDIT_CHAIN_INVALID when the chain does not verify.
     */
    post: operations['createAuditCheckpoint'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audit/export': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Export the chain as NDJSON
     * @description One audit entry per line in sequence order, streamed, for offline verification.
     */
    get: operations['exportAuditLog'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/audit/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * One audit entry
     * @description Entries of another organization answer 404.
     */
    get: operations['getAuditEntry'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List traces
     * @description Newest first. Filters agentId, status (approved, flagged, blocked, success), from/to (ISO 8601). page default 1; limit default 20, values above 100 are clamped to 100. A workspace key scoped to agents sees only theirs.
     */
    get: operations['listTraces'];
    put?: never;
    /**
     * Ingest a decision trace
     * @description Agent key (svc_agent_): the trace is recorded for the key’s agent; a body `agentId` must equal it (else 403). A writable workspace key may ingest too, with `agentId` required and inside its scope. The body is validated with the limits of the schema version in force (X-Svc-Version; byte limits on the UTF-8 JSON encoding). Confidence, when absent, is estimated from the output text before policies run. Every outcome is stored with one audit entry (trace.approved | trace.flagged | trace.blocked); a flagged trace gets a pending review item. Idempotency-Key (≤ 255 characters) is honoured per organization for 24 hours. The answer comes once the trace has committed; traces arriving together are committed together (group commit).
     */
    post: operations['ingestTrace'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces/{id}/similar': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Traces similar to one trace
     * @description Trigram similarity (pg_trgm) of prompt and output text within the organization, most similar first, the trace itself excluded; only traces with similarity ≥ 0.2. limit default 5, max 20.
     */
    get: operations['listSimilarTraces'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces/{id}/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Check a trace’s stored content against its audit entry
     * @description Checks the trace’s stored content (inputContext, outputDecision, metadata, rationale) against the content hash its audit entry records: SHA-256 over the trace’s random salt and the RFC 8785 canonical form of the content. The entry is the trace’s own ingestion entry, or the entry of the last CPI verdict that changed the content. `intact`: the content is what was recorded; `altered`: it was changed outside the service (or its salt or entry is gone); `erased`: the subject’s content was erased (POST /subjects/{ref}/erasure), so there is nothing to check; `unhashed`: the trace was stored before content hashing, and nothing can be said of its content. The chain itself is checked by GET /audit/verify.
     */
    get: operations['verifyTraceContent'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * One trace
     * @description Traces of another organization (or outside a key’s scope) answer 404.
     */
    get: operations['getTrace'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/otel/v1/traces': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * OTLP/HTTP trace export
     * @description OTLP/HTTP ExportTraceServiceRequest as application/json or application/x-protobuf, optionally `Content-Encoding: gzip` (body ≤ 4 MiB as sent, ≤ 8 MiB inflated; a larger body answers 413 PAYLOAD_TOO_LARGE). Only generative-AI spans (gen_ai.operation.name, gen_ai.provider.name or gen_ai.system) are kept, others are dropped silently; each kept span goes through the POST /traces pipeline (validation under the schema version in force, policies, storage, audit) for the key’s agent. The reply uses the request’s encoding: ExportTraceServiceResponse whose partialSuccess counts the rejected spans with their reasons (blocked and flagged spans are accepted). An undecodable body answers 400 (413 too large, 415 unsupported Content-Type or Content-Encoding) with a google.rpc.Status `{code, message}` in the request’s encoding. Authentication and version errors keep the standard JSON error envelope.
     */
    post: operations['exportOtlpTraces'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/policies': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List policies
     * @description Active policies in evaluation order (priority, then creation). `includeInactive=true` lists all. limit default 100, max 100.
     */
    get: operations['listPolicies'];
    put?: never;
    /**
     * Create a policy
     * @description Owner or admin. Either a full policy (`name`, `outcome`, `conditions` required) or `{templateId, name?}`. Conditions are validated by the engine: an unknown field or operator, a bad pattern, a wrongly typed value or too many conditions is a 400 VALIDATION_ERROR whose `details` name the path (`conditions[0].operator`). Every id in `agentIds` must be an agent of the caller’s organization: an unknown, deleted or other organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`agentIds.2`), the same answer in each case, and nothing is stored. Writes `policy.created`. Trace evaluation uses the change from the next trace on, on every replica.
     */
    post: operations['createPolicy'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/policies/templates': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List policy templates
     * @description Pre-built policies; `POST /policies {templateId, name?}` creates one from a template.
     */
    get: operations['listPolicyTemplates'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/policies/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get a policy */
    get: operations['getPolicy'];
    put?: never;
    post?: never;
    /**
     * Delete a policy
     * @description Owner or admin. Writes `policy.deleted` (the audit entry is kept). Trace evaluation uses the change from the next trace on, on every replica.
     */
    delete: operations['deletePolicy'];
    options?: never;
    head?: never;
    /**
     * Update a policy
     * @description Owner or admin. Partial: only the fields sent change (`conditions` is replaced whole); the resulting policy is validated as a whole. Every id in `agentIds` must be an agent of the caller’s organization: an unknown, deleted or other organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`agentIds.2`), the same answer in each case, and nothing is stored. Writes `policy.updated` with the changed keys when something changed. Trace evaluation uses the change from the next trace on, on every replica.
     */
    patch: operations['updatePolicy'];
    trace?: never;
  };
  '/api/v1/agents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List agents
     * @description Any role, a workspace key or an agent key. Newest first; limit default 50, max 100. A workspace key scoped to agents lists only those; an agent key lists only its own agent. `keyPrefix` is the start of the live key.
     */
    get: operations['listAgents'];
    put?: never;
    /**
     * Create an agent and its key
     * @description Owner, admin or member. Returns the agent with its `svc_agent_` key in `apiKey`, shown this once (only its SHA-256 is stored). The key is bound to this agent: its scope is fixed at creation and kept by regeneration. Writes `agent.created` (name and key prefix; never the key).
     */
    post: operations['createAgent'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/agents/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an agent with its analytics
     * @description Any role, a workspace key within its scope, or an agent key for its own agent. An agent outside the caller’s scope answers 404, like an absent one, so that other agents’ ids are not disclosed. `analytics` is computed over the agent’s traces: counts by status, mean confidence (two decimals, null when there are no traces), `humanOverrideRate` (traces with `humanOverride` over all the agent’s traces until human verdicts are recorded separately; null when there are none) and the time of the last trace.
     */
    get: operations['getAgent'];
    put?: never;
    post?: never;
    /**
     * Delete an agent
     * @description Owner or admin for any agent; a member only for agents they created. User session only: API keys get 403. The agent’s traces are retained; its key is revoked at once (401 from the next request). Its id leaves the `agentIds` of the organization’s policies and the `scope.agentIds` of its workspace keys in the same transaction; a policy or key left naming no agent (which would mean every agent) is deactivated or revoked instead of widened. Writes `agent.deleted` (listing them in `detachedFrom`) and, per changed record, `policy.updated`, `auth.key_updated` or `auth.key_revoked` with `reason: agent_deleted`.
     */
    delete: operations['deleteAgent'];
    options?: never;
    head?: never;
    /**
     * Rename an agent or change its description
     * @description Owner or admin for any agent; a member only for agents they created. User session only: API keys get 403. Writes `agent.updated` with the changes (nothing when nothing changed).
     */
    patch: operations['updateAgent'];
    trace?: never;
  };
  '/api/v1/agents/{id}/regenerate-key': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Regenerate an agent’s key
     * @description Owner or admin for any agent; a member only for agents they created. User session only: API keys get 403. Returns the new key in `apiKey`, shown this once, with the same scope as the old one; the old key is refused (401) from now on. Writes `agent.key_regenerated` (prefixes only).
     */
    post: operations['regenerateAgentKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/approval-patterns': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List approval patterns
     * @description Any role. A pattern is a signature (agent, `outputDecision.action`, sorted matched policy ids) with its review decisions counted: each approve or reject is one observation. At 50 observations or more with 95 % approvals or more it moves from `observing` to `pending_signoff`. Most recently changed first; limit default 50, max 100.
     */
    get: operations['listApprovalPatterns'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/approval-patterns/{id}/signoff': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Sign off a pattern
     * @description Owner or admin; only from `pending_signoff`. The pattern becomes `active`: from then on a trace that policies flag with its signature is stored approved with `metadata.autoApprovedBy` (the pattern id), answered 201, audited `trace.auto_approved`, and gets no review item. Writes `approval_pattern.signed_off`.
     */
    post: operations['signOffApprovalPattern'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/approval-patterns/{id}/revoke': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Revoke a pattern
     * @description Owner or admin; from `active` or `pending_signoff`. The pattern goes back to `observing` with its counts reset, and flagged traces with its signature go to review again. Writes `approval_pattern.revoked`.
     */
    post: operations['revokeApprovalPattern'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/review-queue': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List review items
     * @description Any role. `status` defaults to `pending`; `assignedTo` takes a user id, `me` or `none`. Oldest first (the head of the queue); limit default 50, max 100. Each item carries an excerpt of its trace (prompt and output text, 500 characters each, and the confidence) and the policies that flagged it.
     */
    get: operations['listReviewItems'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/review-queue/bulk-decision': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Decide several items
     * @description Owner, admin or member. 1 to 100 ids, each decided on its own as by the single decision: `approve` → item `approved`, trace `approved`; `reject` → item `rejected`, trace `blocked`; `escalate` → item `escalated`, trace stays `flagged`, and from then on only an owner or admin may decide it. Approve and reject each count one observation of the item’s approval pattern. The decision, the trace’s status, the audit entry (`review.approved|rejected|escalated`) and the event (`review.completed` or `review.escalated`, to webhooks and the event stream) commit together. Feedback on the trace (POST /cpi/ingest) closes a pending or escalated item itself (`resolution: feedback`), after which a decision answers 409 `ALREADY_DECIDED`. Answers the ids decided in `processed` and, for each other id, its error code and message in `failed` (`NOT_FOUND`, `ALREADY_DECIDED`, `ALREADY_ESCALATED`, `FORBIDDEN`, `TRACE_ERASED`).
     */
    post: operations['decideReviewItems'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/review-queue/{id}/decision': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Decide an item
     * @description Owner, admin or member; viewers read only. `approve` → item `approved`, trace `approved`; `reject` → item `rejected`, trace `blocked`; `escalate` → item `escalated`, trace stays `flagged`, and from then on only an owner or admin may decide it. Approve and reject each count one observation of the item’s approval pattern. The decision, the trace’s status, the audit entry (`review.approved|rejected|escalated`) and the event (`review.completed` or `review.escalated`, to webhooks and the event stream) commit together. Feedback on the trace (POST /cpi/ingest) closes a pending or escalated item itself (`resolution: feedback`), after which a decision answers 409 `ALREADY_DECIDED`. An item approved or rejected already answers 409 `ALREADY_DECIDED`, also to the losers of concurrent decisions; escalating an escalated item answers 409 `ALREADY_ESCALATED`; a member deciding an escalated item gets 403. Notes on an item whose trace’s content was erased at its subject’s request answer 409 `TRACE_ERASED` (decide it without notes).
     */
    post: operations['decideReviewItem'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/review-queue/{id}/assign': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Assign an item
     * @description Owner, admin or member. `assignedTo` is the user id of an active member of the organization (else 400), or null to unassign. Writes `review.assigned` when the assignee changes.
     */
    patch: operations['assignReviewItem'];
    trace?: never;
  };
  '/api/v1/webhooks': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List webhooks
     * @description Any role, or a workspace key (one scoped to agents sees the webhooks filtered on them). Newest first; limit default 50, max 100. Secrets are never shown again.
     */
    get: operations['listWebhooks'];
    put?: never;
    /**
     * Create a webhook
     * @description Owner, admin, or a writable workspace key (a read-only key gets 403; a key scoped to agents must set `filterAgentId` to one of them). Answers the webhook with its `whsec_` signing secret, shown this once and stored encrypted. At most 50 per organization (409). Deliveries follow Standard Webhooks: a POST of `{type, timestamp, data}` with the headers `webhook-id` (the event id, the same on every retry and redelivery: deduplicate on it), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret’s base64 part). A 2xx within 10 s is success; redirects are not followed; failures are retried after about 30 s, 2 min, 10 min, 1 h and 6 h (±20 %), a `Retry-After` on 429 or 503 is honoured, and a 410 disables the webhook. Writes `webhook.created`.
     */
    post: operations['createWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a webhook
     * @description Any role, or a workspace key.
     */
    get: operations['getWebhook'];
    put?: never;
    post?: never;
    /**
     * Delete a webhook
     * @description Owner, admin, or a writable workspace key. Its pending deliveries are not sent. Writes `webhook.deleted`.
     */
    delete: operations['deleteWebhook'];
    options?: never;
    head?: never;
    /**
     * Update a webhook
     * @description Owner or admin. Any of `url` (checked again by the SSRF guard), `events`, `filterAgentId`, `description` and `isActive` (`true` enables a webhook a 410 disabled). Writes `webhook.updated`.
     */
    patch: operations['updateWebhook'];
    trace?: never;
  };
  '/api/v1/webhooks/{id}/rotate-secret': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Rotate the signing secret
     * @description Owner or admin. Answers the new secret, shown this once. With `gracePeriodSeconds` (0 to 604800, default 0) the old secret keeps signing for that long: deliveries then carry both signatures, space-separated in `webhook-signature`; with 0 only the new one. Writes `webhook.secret_rotated`.
     */
    post: operations['rotateWebhookSecret'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send a test event
     * @description Owner or admin. Sends `webhook.test` to this webhook, whatever it subscribes to, and answers the delivery after its first attempt (up to 10 s): `status` `succeeded`, or `pending` with the error and the next attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`. Writes `webhook.tested`.
     */
    post: operations['testWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/deliveries': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List a webhook’s deliveries
     * @description Any role. Newest first; limit default 50, max 100; `status` filters. Each delivery shows its attempts, the last answer (status and the first 1 KiB of the body) or error, and when the next attempt runs. Kept as long as events (EVENT_RETENTION_DAYS).
     */
    get: operations['listWebhookDeliveries'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Redeliver an event
     * @description Owner or admin. A new delivery of the same event (the same `webhook-id`, so receivers can tell), answered after its first attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`; an event past its retention 404. Writes `webhook.redelivered`.
     */
    post: operations['redeliverWebhookDelivery'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/events/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Stream events (SSE)
     * @description Authenticated by `token`, a stream token from `POST /auth/stream-token` (single use, valid 60 s; a JWT or a used token gets 401). Streams the caller’s organization’s events, any role, as `text/event-stream`: each event is `id: <eventId>`, `event: <type>` and `data: {type, timestamp, data}` (the webhook body; the types are the webhook event names), with a `: heartbeat` comment every 15 s. After a reconnect with `Last-Event-ID` (header) or `lastEventId` (query), the events after that id from the last 24 hours (at most 1,000) come first, then live ones; no event is sent twice on a connection. Replicas share events through PostgreSQL LISTEN/NOTIFY. A client that does not keep up (256 KiB unread) is disconnected and should reconnect with its last id. The same stream is offered over a WebSocket at `GET /events/ws`.
     */
    get: operations['streamEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/cpi': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Compliance-performance rollup
     * @description Every role. Over all the organization’s traces: counts by status, human verdicts (a review item approved or rejected, or feedback through POST /cpi/ingest; a trace with both counts once, by the later), the correct-flag rate (decided flags rejected or corrected), false-flag rate (decided flags approved), human-override rate (humanOverride among traces with a verdict), mean confidence per status and 30 daily points. Computed in SQL from daily rollups, never by loading traces. Counted by the CPI read limiter, which GET /cpi and GET /cpi/analytics share: 60 requests per user per 15 minutes (CPI_RATE_LIMIT_MAX, CPI_RATE_LIMIT_WINDOW_MS), shared by the replicas through Redis when REDIS_URL is set; every authenticated answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, and beyond the limit 429 RATE_LIMITED with Retry-After.
     */
    get: operations['getCpiRollup'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/cpi/analytics': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Human-feedback analytics
     * @description Every role. Per agent: traces, verdicts, overrides and override rate (overrides / traces); the 10 most frequent notes of traces whose latest feedback is a correction; the mean confidence before and after corrections that gave one; and how long after a trace its first correction came (<1h, 1-24h, 1-7d, >7d). Counted by the CPI read limiter, which GET /cpi and GET /cpi/analytics share: 60 requests per user per 15 minutes (CPI_RATE_LIMIT_MAX, CPI_RATE_LIMIT_WINDOW_MS), shared by the replicas through Redis when REDIS_URL is set; every authenticated answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, and beyond the limit 429 RATE_LIMITED with Retry-After.
     */
    get: operations['getCpiAnalytics'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/cpi/ingest': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Submit a human verdict on a trace
     * @description Workspace key only (not read-only); enterprise and custom plans (cpiFeedbackIngest), else 403 FORBIDDEN. approve sets the trace to success with humanOverride false; correct (or a correctedDecision without action) replaces the decision, keeps the original, sets humanOverride true. A pending or escalated review item of the trace closes in the same transaction, `approved` for approve and `rejected` for correct, with `resolution: feedback`: audited `review.approved|rejected` naming the key and userEmail, announced as `review.completed`; deciding it afterwards answers 409 ALREADY_DECIDED. Errors: 400 VALIDATION_ERROR, 404 NOT_FOUND (trace not in the organization), 409 TRACE_ERASED (the subject’s content was erased: a verdict would write into it). The verdict’s audit entry records the content hash of the trace after it (GET /traces/{id}/verify checks against it from then on) and whether there were notes, not the notes.
     */
    post: operations['ingestCpiFeedback'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces/purge': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Purge traces
     * @description Owner only. Deletes the organization’s traces created before `before` (optionally one agent’s, one status’s), with their review items and feedback, 1,000 per transaction so ingestion is not held up. Audit entries are never deleted, so the chain still verifies; one entry `traces.purged` records the filter and the count. `dryRun: true` counts and deletes nothing. Answers `{matched, purged}`.
     */
    post: operations['purgeTraces'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/subjects/{ref}/decisions': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The decisions about a person
     * @description Every decision about the person (GDPR article 15), across agents and across POST /traces and OTLP, newest first; erased traces are listed with their skeleton (content null, `erasedAt` set). Each call is audited (`subject.accessed`, the subject named by its hash). page default 1; limit default 20, values above 100 are clamped to 100. A reference no trace carries answers an empty page.
     */
    get: operations['listSubjectDecisions'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/subjects/{ref}/erasure': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The progress of a person’s erasure
     * @description The latest erasure of the subject and its progress; 404 when none was asked for.
     */
    get: operations['getSubjectErasure'];
    put?: never;
    /**
     * Erase a person’s content
     * @description Erases the person’s content (GDPR article 17) in the background, in batches of 1,000 traces a transaction: the traces’ inputContext, outputDecision, metadata and rationale (read as null, `erasedAt` set), the similarity text, the content hash’s salt, review notes, CPI verdicts’ notes, notes in stored events (the stream’s replay, webhook redeliveries) and receivers’ answers to those events. Status, confidence, policy results, reviewers and times stay, and the audit chain still verifies; GET /traces/{id}/verify then says `erased`. Answers 202 with the job; while one is running, the same job. Audited `subject.erasure_requested`, then `subject.erased` with the counts. 409 SUBJECT_ON_HOLD while a legal hold is in place.
     */
    post: operations['eraseSubject'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/subjects/{ref}/hold': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Place a legal hold on a person’s decisions
     * @description Places a legal hold: while it is in place, erasure is refused (409 SUBJECT_ON_HOLD), a running erasure stops at its next batch, and retention purges (POST /traces/purge, the daily purge past the retention period) keep the subject’s traces. Idempotent; audited `subject.hold_placed` when placed.
     */
    post: operations['holdSubject'];
    /**
     * Lift a legal hold
     * @description Lifts the legal hold (answers `held: false`); audited `subject.hold_lifted`. 404 when the subject is not on hold.
     */
    delete: operations['releaseSubjectHold'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/integrations/confirm': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Confirm an e-mail recipient
     * @description Public. The token of the link mailed to a recipient who is not a member of the organization (`APP_URL/integrations/confirm?token=…`). Confirms that address for that integration only: it then receives the notifications and test sends. Single use, valid 7 days; an unknown, used or expired token is 400 INVALID_TOKEN. Limited per IP address like the /auth routes (429 RATE_LIMIT_EXCEEDED with Retry-After). Writes `integration.recipient.confirmed`.
     */
    post: operations['confirmIntegrationRecipient'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/integrations': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List integrations
     * @description Any role. Newest first; limit default 50, max 100.
     */
    get: operations['listIntegrations'];
    put?: never;
    /**
     * Create an integration
     * @description Owner, admin or member. A webhook integration answers its `whsec_` signing secret this once. At most 50 per organization (409). Writes `integration.create`.
     */
    post: operations['createIntegration'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/integrations/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an integration
     * @description Any role. The URL is never shown, only its host.
     */
    get: operations['getIntegration'];
    put?: never;
    post?: never;
    /**
     * Delete an integration
     * @description Owner, admin, or the member who created it. Writes `integration.delete`.
     */
    delete: operations['deleteIntegration'];
    options?: never;
    head?: never;
    /**
     * Update an integration
     * @description Owner, admin, or the member who created it. name and/or config (replaced whole; the type cannot change). Writes `integration.update`.
     */
    patch: operations['updateIntegration'];
    trace?: never;
  };
  '/api/v1/integrations/{id}/test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send a test notification
     * @description Owner, admin, or the member who created it. Sends now and answers whether the channel accepted it: an e-mail of fixed text to each confirmed recipient, one message per address (pending recipients get nothing; `sent` counts the messages accepted), a Slack message `{text}`, or a Standard Webhooks envelope of type `integration.test` signed with the secret. The integration’s name appears only as quoted data, never in a subject. At most 10 per user and 30 per organization per hour (429 RATE_LIMITED with Retry-After).
     */
    post: operations['testIntegration'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List assessments
     * @description Any role; plan feature friaWizard (403 UPGRADE_REQUIRED otherwise). Filters: status, search (case-insensitive substring of systemName). Most recently updated first; limit default 50, max 100. Each row carries its completeness.
     */
    get: operations['listFrias'];
    put?: never;
    /**
     * Create an assessment
     * @description Owner, admin or member; plan feature friaWizard. Created as a draft. systemName required (trimmed, 1–200). Risks as structured rows (identifiedRisks) or the wizard fields risksIdentified/mitigations, collapsed into one row; both at once is 400 VALIDATION_ERROR. Writes `fria.create`.
     */
    post: operations['createFria'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an assessment
     * @description Any role; plan feature friaWizard. With completeness: the share (0–100) of the 8 assessed fields populated. 404 for an unknown id or another organization’s assessment.
     */
    get: operations['getFria'];
    put?: never;
    post?: never;
    /**
     * Delete a draft
     * @description Owner, admin or member; plan feature friaWizard. Only a draft that was never submitted; any other assessment is 404 NOT_FOUND. Writes `fria.delete`.
     */
    delete: operations['deleteFria'];
    options?: never;
    head?: never;
    /**
     * Edit an assessment
     * @description Owner, admin or member; plan feature friaWizard. Only a draft or an assessment in review; approved or archived is 409 CONFLICT (an edit is not a move). In review the anchored chainHash is kept: it is the hash of the submitted version. Writes `fria.update` with the changed field names.
     */
    patch: operations['updateFria'];
    trace?: never;
  };
  '/api/v1/fria/{id}/verify': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Verify an assessment against its anchor
     * @description Any role; plan feature friaWizard. Recomputes the SHA-256 of the canonical stored contents and compares it with chainHash: matches is null when nothing was ever anchored. In review after edits it is false by design (the anchor is the submitted version); after approval false means the row changed outside the API.
     */
    get: operations['verifyFria'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria/{id}/history': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Audit history of an assessment
     * @description Any role; plan feature friaWizard. The assessment’s audit entries (fria.create, fria.update, fria.transition), oldest first, without ip or user agent; limit default 50, max 200. 404 for an unknown id or another organization’s assessment.
     */
    get: operations['listFriaHistory'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria/{id}/transition': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Move an assessment
     * @description Owner, admin or member; a move to approved needs owner or admin (403 FORBIDDEN). Allowed: draft→review, review→approved, review→draft, approved→draft, any non-archived→archived; anything else (including the current state) is 400 FRIA_TRANSITION_FAILED. Entering review or approved anchors chainHash over the current contents; approval stamps approvedBy/approvedAt and emits `fria.approved`. Writes `fria.transition`.
     */
    post: operations['transitionFria'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria/{id}/submit': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Submit an assessment for review
     * @description Same as a transition to review: owner, admin or member; only from draft.
     */
    post: operations['submitFria'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/fria/{id}/approve': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Approve an assessment
     * @description Same as a transition to approved: owner or admin; only from review. Emits `fria.approved` with {id, systemName, chainHash, approvedBy, approvedAt}.
     */
    post: operations['approveFria'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/compliance/catalogue': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Framework catalogue
     * @description Any role; plan feature complianceMapping (403 UPGRADE_REQUIRED otherwise). The clauses of iso-42001 (default, 18 clauses), eu-ai-act or nist-rmf, each with a paraphrased title, one line of guidance and the default status `gap`. 400 VALIDATION_ERROR for an unknown framework.
     */
    get: operations['getComplianceCatalogue'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/compliance/crosswalk': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Crosswalk between the frameworks
     * @description Any role; plan feature complianceMapping. Themes (impact assessment, risk management, data governance, documentation and records, transparency, human oversight, accuracy, monitoring and incidents, management system, governance and literacy, third parties) relating clauses of iso-42001, eu-ai-act and nist-rmf, each clause with its title and the organization’s current status (`gap` and `noted: false` without a note), so one piece of evidence can be seen against all three. The themes are product data, our reading.
     */
    get: operations['getComplianceCrosswalk'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/compliance/mapping': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The organization’s mapping of a framework
     * @description Any role; plan feature complianceMapping. The notes written for the framework (default iso-42001), in catalogue order, and the coverage rollup: clauses without a note count as gaps; percent = (covered + partial / 2) / (total − notApplicable) × 100, one decimal, 0 when every clause is not-applicable. 400 VALIDATION_ERROR for an unknown framework.
     */
    get: operations['getComplianceMapping'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Attest one clause
     * @description Owner or admin; plan feature complianceMapping. Creates or updates the note of one clause (idempotent: repeating the same body changes nothing but the review stamp). `status` is `gap` on the first write and unchanged when omitted later; `evidence` (≤ 4,000 characters) and `evidenceRefs` (≤ 20, replacing the list) are unchanged when omitted. Stamps reviewedAt, reviewedBy and a copy of the caller’s e-mail. Every evidence reference must name a FRIA, policy, audit entry or incident of the organization. Audited and published as `compliance.mapping.updated`. 400 VALIDATION_ERROR for an unknown framework, a clauseId outside its catalogue, bounds, or a missing reference (details name `evidenceRefs[i]`).
     */
    patch: operations['updateComplianceMapping'];
    trace?: never;
  };
  '/api/v1/compliance/mapping-notes': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Legacy clause notes (deprecated)
     * @deprecated
     * @description Any role; plan feature complianceMapping. `{notes: {clauseId: text}}` for the framework (default iso-42001): the structured notes’ evidence, with the legacy strings merged over them. 400 VALIDATION_ERROR for an unknown framework. Deprecated: answered with `Deprecation: true`, a `Sunset` date at least 90 days ahead (2027-04-12 unless that is nearer) and `Link: <…/docs/migrations/compliance-mapping-notes>; rel="deprecation"`. Use `/compliance/mapping`.
     */
    get: operations['getLegacyMappingNotes'];
    /**
     * Replace legacy clause notes (deprecated)
     * @deprecated
     * @description Owner or admin; plan feature complianceMapping. Replaces the framework’s legacy map (default iso-42001) and nothing else: the structured notes are untouched. Keys must be clause ids of the framework, values strings of at most 4,000 characters (400 VALIDATION_ERROR with details `notes.<clauseId>` otherwise). Audited `compliance.mapping_notes.updated`. Answers the merged view, like the GET. Deprecated: answered with `Deprecation: true`, a `Sunset` date at least 90 days ahead (2027-04-12 unless that is nearer) and `Link: <…/docs/migrations/compliance-mapping-notes>; rel="deprecation"`. Use `/compliance/mapping`.
     */
    put: operations['replaceLegacyMappingNotes'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/incidents': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List incidents
     * @description Any role. Filters: status, overdue (true: open and past the deadline). Newest first; limit default 50, max 100. timeLeftSeconds and overdue are computed at the time of the request: while open, the whole seconds to the deadline (0 once past) and whether it has passed; once reported or closed the clock stops (null, false).
     */
    get: operations['listIncidents'];
    put?: never;
    /**
     * Record an incident
     * @description Owner, admin or member. The deadline is awareAt plus 10 days (death), 2 (widespread_infringement, critical_infrastructure) or 15 (other). awareAt may not be in the future; agentId and traceId must be the organization’s (400 VALIDATION_ERROR otherwise). Opens the incident and writes `incident.create`.
     */
    post: operations['createIncident'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/incidents/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an incident
     * @description Any role. timeLeftSeconds and overdue are computed at the time of the request: while open, the whole seconds to the deadline (0 once past) and whether it has passed; once reported or closed the clock stops (null, false).
     */
    get: operations['getIncident'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    /**
     * Report or close an incident
     * @description Owner, admin or member. open → reported (reportedAt, default now, between awareAt and now) or closed; reported → closed. The current status again (without reportedAt) changes nothing. Writes `incident.update`. Errors: 400 VALIDATION_ERROR, 404 NOT_FOUND, 409 CONFLICT (a move not allowed, or a concurrent change).
     */
    patch: operations['updateIncident'];
    trace?: never;
  };
  '/api/v1/reports/compliance': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The compliance report as a PDF
     * @description Any role, any plan; 10 per user per hour (429 RATE_LIMITED with Retry-After beyond). The period is [from, to), by default the 30 days before now, at most 366 days. Sections, in order: cover (organization, period, generated at, schema version); trace volume by status with a chart; average confidence by status; policy coverage; review backlog; audit chain verification (valid, entries, head hash, first break); the incident clock; the regulator-mapping table of every framework; FRIAs by status. Rendered by Chromium (CHROMIUM_PATH, else a system Chromium, else the one bundled in the npm package); 503 SERVICE_UNAVAILABLE when none is usable, when renders are saturated or when one times out. A large organization may take seconds.
     */
    get: operations['getComplianceReport'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/reports/schedule': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List scheduled reports
     * @description Owner or admin; plan feature scheduledReports (Governance and above). Active reports, newest first; includeInactive=true lists all. Limit default 50, max 100.
     */
    get: operations['listScheduledReports'];
    put?: never;
    /**
     * Schedule a report
     * @description Owner or admin; plan feature scheduledReports (Governance and above). Recipients are lower-cased and de-duplicated, then 1 to 20 are allowed. nextSendAt is the creation time, so the first digest goes out on the scheduler’s next tick. Records the creator and their e-mail. Writes `report.schedule.create`.
     */
    post: operations['createScheduledReport'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/reports/schedule/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get a scheduled report
     * @description Owner or admin; plan feature scheduledReports (Governance and above).
     */
    get: operations['getScheduledReport'];
    put?: never;
    post?: never;
    /**
     * Delete a scheduled report
     * @description Owner or admin; plan feature scheduledReports (Governance and above). A hard delete. Writes `report.schedule.delete`.
     */
    delete: operations['deleteScheduledReport'];
    options?: never;
    head?: never;
    /**
     * Update a scheduled report
     * @description Owner or admin; plan feature scheduledReports (Governance and above). Any field, including isActive (false pauses it, true resumes it) and nextSendAt. Writes `report.schedule.update`.
     */
    patch: operations['updateScheduledReport'];
    trace?: never;
  };
  '/api/v1/reports/send-now/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Send a scheduled report now
     * @description Owner or admin; plan feature scheduledReports (Governance and above). Renders the digest for the period since the last send and sends it at once, active or not: sentCount and lastSentAt change, nextSendAt does not. 502 SEND_FAILED when the mail server does not accept it (nothing changes).
     */
    post: operations['sendScheduledReportNow'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/alerts': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * List alert rules
     * @description Any role. Newest first; filter by `state` and `isActive`; limit default 50, max 100.
     */
    get: operations['listAlerts'];
    put?: never;
    /**
     * Create an alert rule
     * @description Owner, admin or member. Starts in state `ok`; evaluated at the next tick of the scheduler (every `ALERT_INTERVAL_MS`), then every interval. A change ok → firing or back notifies each integration once, writes the audit entry and publishes the event `alert.triggered` or `alert.resolved`. At most 100 rules per organization (409). Unknown `agentId` or `integrationIds`: 400. Writes `alert.create`.
     */
    post: operations['createAlert'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/alerts/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Get an alert rule
     * @description Any role.
     */
    get: operations['getAlert'];
    put?: never;
    post?: never;
    /**
     * Delete an alert rule
     * @description The owner only (the role table). Its history is kept for digests. Writes `alert.delete`.
     */
    delete: operations['deleteAlert'];
    options?: never;
    head?: never;
    /**
     * Update an alert rule
     * @description Owner, admin, or the member who created it. A change of what is measured is evaluated at the next tick; `isActive: false` stops evaluation and rests the state at ok without a notification. Writes `alert.update`.
     */
    patch: operations['updateAlert'];
    trace?: never;
  };
  '/api/v1/alerts/{id}/history': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The transitions of an alert rule
     * @description Any role. Each ok ↔ firing change with the value measured; newest first; limit default 50, max 100.
     */
    get: operations['listAlertHistory'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/traces/{id}/explanation': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The explanation of one decision (EU AI Act art. 86), as JSON or a PDF
     * @description Any role, and a workspace key that may read the trace (EU AI Act art. 86: the explanation of one decision to the person it concerns). From stored records only: the agent and its stated purpose (its description), the decision’s status and confidence, each policy that matched with its conditions in plain English (from the policy’s stored conditions; the text says so when the policy was edited after the decision, or deleted), the human review (the reviewer’s role, never who they are; the time, the decision and the notes), the approval pattern that approved it automatically, later human feedback (`corrections`), and the organization’s `contestContact` (PATCH /organizations/current). A trace whose content was erased is explained from what remains (`erasedAt` set). `format=pdf` answers the same as a PDF written for the person concerned (`Content-Disposition: attachment`), rendered by Chromium: 503 SERVICE_UNAVAILABLE when none is usable, when renders are saturated or one times out. Another organization’s trace, one outside a key’s scope, or a malformed id answers 404. `Cache-Control: no-store`.
     */
    get: operations['getTraceExplanation'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/subjects/{ref}/report': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * The report of the decisions about a person, as a PDF (GDPR art. 15)
     * @description Owner or admin. The decisions about the person (GDPR article 15) as a PDF written for them, in plain words: for each decision about the reference, across agents and across POST /traces and OTLP, newest first, when it was made, the agent’s name and description, the outcome and the confidence, each policy that matched in plain words, the human part (the reviewer’s role, never who they are; the time and the outcome; or the approval pattern that approved it; or none), later corrections, and at the end how to contest a decision (the organization’s `contestContact`, PATCH /organizations/current). Each decision says what GET /traces/{id}/explanation says of it. Erased decisions are listed with what remains and a note that their content was erased. At most 500 decisions, the newest; the PDF says how many more the records hold. A reference no trace carries answers a PDF saying so. The reference is printed in the PDF, which is for the person; it is never logged. Audited `subject.accessed` with `{what: "report", decisions}` (and `total` when more exist), the subject named by its hash. Rendered by Chromium: 503 SERVICE_UNAVAILABLE when none is usable, when renders are saturated or one times out. `Cache-Control: no-store`.
     */
    get: operations['getSubjectReport'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api/v1/events/ws': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Stream events (WebSocket)
     * @description Upgrade to a WebSocket. `token` is a stream token from `POST /auth/stream-token` (single use, 60 s). The same events as `GET /events/stream`, as JSON text messages `{id, type, timestamp, data}` (the schema `GovernanceEvent`, discriminated by `type`); `lastEventId` replays the events after that id from the last 24 hours (at most 1,000) first. Ping frames every 15 s. Close codes: 4401 a bad, used or expired token (sent after the upgrade, since browsers cannot read a refused upgrade’s status), 1013 a client too slow to keep up (reconnect with `lastEventId`) or too many streams, 1001 the server is shutting down. A GET without an upgrade answers 426 `UPGRADE_REQUIRED`.
     */
    get: operations['streamEventsWebSocket'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface webhooks {
  'trace.approved': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A trace was approved at ingestion (by policies, or by a signed-off approval pattern)
     * @description Sent to each active webhook subscribed to `trace.approved` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['traceApprovedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'trace.flagged': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A trace was flagged for human review (it has a pending review item)
     * @description Sent to each active webhook subscribed to `trace.flagged` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['traceFlaggedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'trace.blocked': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A trace was blocked by a policy
     * @description Sent to each active webhook subscribed to `trace.blocked` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['traceBlockedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'review.completed': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A review item was approved or rejected, by a reviewer or by feedback on its trace
     * @description Sent to each active webhook subscribed to `review.completed` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['reviewCompletedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'review.escalated': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A review item was escalated to owners and admins
     * @description Sent to each active webhook subscribed to `review.escalated` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['reviewEscalatedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'fria.approved': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A fundamental-rights impact assessment was approved
     * @description Sent to each active webhook subscribed to `fria.approved` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['friaApprovedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'compliance.mapping.updated': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A clause of a compliance mapping changed
     * @description Sent to each active webhook subscribed to `compliance.mapping.updated` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['complianceMappingUpdatedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'cpi.approved': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Human feedback approved a trace’s decision
     * @description Sent to each active webhook subscribed to `cpi.approved` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['cpiApprovedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'cpi.corrected': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * Human feedback corrected a trace’s decision
     * @description Sent to each active webhook subscribed to `cpi.corrected` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['cpiCorrectedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'alert.triggered': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * An alert rule started firing
     * @description Sent to each active webhook subscribed to `alert.triggered` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['alertTriggeredWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'alert.resolved': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A firing alert rule went back to ok
     * @description Sent to each active webhook subscribed to `alert.resolved` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['alertResolvedWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'audit.checkpoint': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A signed checkpoint of the audit chain was made
     * @description Sent to each active webhook subscribed to `audit.checkpoint` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['auditCheckpointWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  'webhook.test': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /**
     * A test delivery asked for with POST /webhooks/{id}/test (sent to that webhook only)
     * @description Sent to each active webhook subscribed to `webhook.test` (and matching its `filterAgentId`), signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.
     */
    post: operations['webhookTestWebhook'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export interface components {
  schemas: {
    DnsChallengeRecordDto: {
      /** @enum {string} */
      type: 'TXT';
      /** @example _governance-challenge.bigcorp.example */
      name: string;
      value: string;
    };
    ErrorEnvelopeDto: {
      /** @enum {boolean} */
      success: false;
      /** @description Human-readable message. */
      error: string;
      /**
       * @description Stable machine-readable code.
       * @example VALIDATION_ERROR
       */
      code: components['schemas']['ErrorCode'];
      /** @description Validation errors: one entry per invalid field (at most 20; `detailsTotal` then counts them all). 403 SSO_REQUIRED: `{ssoUrl}`. */
      details?: components['schemas']['ErrorDetailDto'][] | components['schemas']['SsoRequiredDetailsDto'];
      /** @description How many details were found, when more than `details` lists. */
      detailsTotal?: number;
      /**
       * @description A VALIDATION_ERROR’s reason, where it has one.
       * @enum {string}
       */
      reason?: 'ALREADY_MEMBER';
      /** @description DOMAIN_NOT_VERIFIED: the record to publish. */
      record?: components['schemas']['DnsChallengeRecordDto'];
      /** @description VERSION_UNSUPPORTED: the versions this service knows. */
      supportedVersions?: string[];
      /** @description UPGRADE_REQUIRED: the plan feature the route needs. */
      feature?: string;
      /** @description SERVICE_UNAVAILABLE from `/health` and `/health/ready`: their checks, as in their 200 answer, with what failed (`database: "down"`, `migrations: "unknown"` or `"pending"`, `draining: true`). */
      checks?: {
        [key: string]: unknown;
      };
      /** @description Request id, on 500 responses; quote it when reporting a problem. */
      requestId?: string;
    };
    ErrorDetailDto: {
      /** @example email */
      field: string;
      /** @example email must be an email */
      message: string;
    };
    SsoRequiredDetailsDto: {
      /** @description The single sign-on dispatcher, which takes `{email}`. */
      ssoUrl: string;
    };
    HealthChecksDto: {
      /** @enum {string} */
      database: 'up' | 'down';
      /**
       * @description `slow` when the event loop ran more than 100 ms late in the last 10 s (CPU-bound work). `starting` until 3 s after the service began listening: the delay is measured from then (start-up, such as migrations, is not load) and not judged while the service settles.
       * @enum {string}
       */
      eventLoop: 'starting' | 'ok' | 'slow';
      /** @description The longest event-loop delay in the last 10 s, in milliseconds, counted from when the service began listening. */
      eventLoopDelayMs: number;
    };
    HealthDto: {
      /**
       * @description `ok` whenever the database answers; see `checks` for the details.
       * @enum {string}
       */
      status: 'ok';
      /** Format: date-time */
      timestamp: string;
      /** @description Seconds since the process started. */
      uptime: number;
      checks: components['schemas']['HealthChecksDto'];
    };
    HealthResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['HealthDto'];
    };
    LivenessDto: {
      /**
       * @description Always `ok`: the process answers. Nothing else is checked.
       * @enum {string}
       */
      status: 'ok';
      /** @description Seconds since the process started. */
      uptime: number;
    };
    LivenessResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['LivenessDto'];
    };
    ReadinessChecksDto: {
      /** @enum {string} */
      database: 'up' | 'down';
      /**
       * @description `current` when the database holds every migration this build knows (or newer ones, a later build's); `unknown` when the database did not answer.
       * @enum {string}
       */
      migrations: 'current' | 'pending' | 'unknown';
      /** @description True from SIGTERM on: the process finishes what it was sent and takes nothing new. */
      draining: boolean;
    };
    ReadinessDto: {
      /** @enum {string} */
      status: 'ready';
      checks: components['schemas']['ReadinessChecksDto'];
    };
    ReadinessResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ReadinessDto'];
    };
    VersionLimitsDto: {
      /**
       * @example {
       *       "maxPromptLength": 50000,
       *       "maxSystemPromptLength": 50000,
       *       "maxContextBytes": 102400,
       *       "maxConversationIdLength": 256
       *     }
       */
      inputContext: {
        maxPromptLength: number;
        maxSystemPromptLength: number;
        maxContextBytes: number;
        maxConversationIdLength: number;
      };
      /**
       * @example {
       *       "maxActionObjectBytes": 10240,
       *       "maxRationaleLength": 50000,
       *       "maxAlternatives": 10,
       *       "maxToolCalls": 50
       *     }
       */
      outputDecision: {
        maxActionObjectBytes: number;
        maxRationaleLength: number;
        maxAlternatives: number;
        maxToolCalls: number;
      };
    };
    SchemaVersionDto: {
      /** @example 2026-04-11 */
      version: string;
      /** @enum {string} */
      status: 'current' | 'deprecated';
      recommended: boolean;
      /**
       * @description ISO date from which the version answers 410.
       * @example null
       */
      sunset?: string | null;
      limits: components['schemas']['VersionLimitsDto'];
    };
    SchemaVersionListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SchemaVersionDto'][];
    };
    UserDto: {
      id: string;
      name: string;
      /** Format: email */
      email: string;
      /** @example en */
      locale: string;
      /** @example UTC */
      timezone: string;
      mfaEnabled: boolean;
      /** Format: date-time */
      createdAt: string;
    };
    PiiMaskingDto: {
      /**
       * @description The PII types masked, each at most once.
       * @example [
       *       "iban",
       *       "creditCard",
       *       "email"
       *     ]
       */
      entities: (
        | 'email'
        | 'phone'
        | 'creditCard'
        | 'iban'
        | 'ipAddress'
        | 'usSsn'
        | 'ukNino'
        | 'deTaxId'
        | 'frNir'
        | 'esDni'
        | 'itFiscalCode'
        | 'nlBsn'
        | 'plPesel'
      )[];
      /**
       * @description `redact` writes `<IBAN>` in place of each value; `hash` writes `<IBAN:` and the first 12 hex of an HMAC of the value under a key of the organization `>`, so that equal values stay equal.
       * @enum {string}
       */
      mode: 'redact' | 'hash';
    };
    OrganizationDto: {
      id: string;
      name: string;
      /** @enum {string} */
      plan: 'sandbox' | 'scale' | 'governance' | 'enterprise' | 'custom';
      /**
       * @description Features the plan unlocks.
       * @example [
       *       "friaWizard",
       *       "sso"
       *     ]
       */
      features: string[];
      /** @description Traces older than this many days are purged daily; null keeps them. */
      traceRetentionDays: number | null;
      /** @description Whom a person contests a decision with (an address, a URL, a department): shown as `contact` in the explanation of a decision (GET /traces/{id}/explanation). null until set. */
      contestContact: string | null;
      /** @description Masking of personal data in trace content before it is stored (docs/data-protection.md, "Masking at ingestion"). null: off. */
      piiMasking: components['schemas']['PiiMaskingDto'] | null;
      /** Format: date-time */
      createdAt: string;
    };
    RegisterResultDto: {
      /** @description JWT (HS256) for the new session. */
      token: string;
      user: components['schemas']['UserDto'];
      organization: components['schemas']['OrganizationDto'];
    };
    RegisterResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['RegisterResultDto'];
    };
    RegisterDto: {
      /** @example Ada Lovelace */
      name: string;
      /**
       * Format: email
       * @example ada@example.com
       */
      email: string;
      /**
       * @description At least 10 characters with an uppercase letter, a lowercase letter and a digit.
       * @example Correct-Horse-9
       */
      password: string;
      /** @example Analytical Engines Ltd */
      organizationName: string;
    };
    LoginResultDto: {
      /** @description JWT (HS256) for the new session. */
      token: string;
      user: components['schemas']['UserDto'];
    };
    MfaChallengeDto: {
      /** @enum {boolean} */
      mfaRequired: true;
      /** @description Purpose-bound token (5 minutes) to post with the code to /auth/mfa/login. */
      tempToken: string;
    };
    LoginDto: {
      /**
       * Format: email
       * @example ada@example.com
       */
      email: string;
      /** @example Correct-Horse-9 */
      password: string;
    };
    MessageDto: {
      /** @example Logged out */
      message: string;
    };
    MessageResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MessageDto'];
    };
    MeOrganizationDto: {
      id: string;
      name: string;
      /** @enum {string} */
      plan: 'sandbox' | 'scale' | 'governance' | 'enterprise' | 'custom';
      /**
       * @example [
       *       "friaWizard",
       *       "sso"
       *     ]
       */
      features: string[];
    };
    MeDto: {
      user: components['schemas']['UserDto'];
      organization: components['schemas']['MeOrganizationDto'];
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
    };
    MeResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MeDto'];
    };
    EmailTokenDto: {
      /** @description The token from the e-mail link. */
      token: string;
    };
    EmailDto: {
      /**
       * Format: email
       * @example ada@example.com
       */
      email: string;
    };
    ResetPasswordDto: {
      /** @description The token from the e-mail link. */
      token: string;
      /**
       * @description New password: at least 10 characters with upper case, lower case and a digit.
       * @example New-Secret-123
       */
      password: string;
    };
    ChangePasswordDto: {
      currentPassword: string;
      /**
       * @description At least 10 characters with upper case, lower case and a digit.
       * @example New-Secret-123
       */
      newPassword: string;
    };
    PlaceholderDto: {
      /** @enum {boolean} */
      available: false;
      /** @example Passkeys are not available yet. */
      message: string;
    };
    PlaceholderResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['PlaceholderDto'];
    };
    OrganizationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['OrganizationDto'];
    };
    UpdateOrganizationDto: {
      /** @example Analytical Engines Ltd */
      name?: string;
      /** @description Days traces are kept; the scheduler purges older ones daily. null keeps them for ever. At least 183 (the six months the EU AI Act asks deployers to keep logs). Owners and admins. */
      traceRetentionDays?: number | null;
      /**
       * @description Whom a person contests a decision with (EU AI Act art. 86): free text, 1 to 500 characters after trimming; null clears it. Owners and admins.
       * @example Write to appeals@acme.example or to Acme Lending, Appeals, 1 Main Street, Dublin
       */
      contestContact?: string | null;
      /** @description Mask these PII types in the content of every trace stored from now on (prompt, output, tool calls, metadata, rationale); policies still see the original. null turns masking off. Owners and admins; audited `organization.pii_masking_updated`. */
      piiMasking?: components['schemas']['PiiMaskingDto'] | null;
    };
    OrganizationDeletionDto: {
      id: string;
      name: string;
      /**
       * Format: date-time
       * @description When the deletion was requested; access ended then.
       */
      deletedAt: string;
      /**
       * Format: date-time
       * @description When the grace period (ORG_DELETION_GRACE_DAYS) ends: the operator can restore the organization until then; its data is erased after it.
       */
      eraseAfter: string;
    };
    OrganizationDeletionResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['OrganizationDeletionDto'];
    };
    DeleteOrganizationDto: {
      /**
       * @description The organization’s name, exactly as it is (case and spaces included): the confirmation.
       * @example Analytical Engines Ltd
       */
      confirmName: string;
    };
    BillingPlanDto: {
      /** @enum {string} */
      plan: 'sandbox' | 'scale' | 'governance' | 'enterprise' | 'custom';
      /**
       * @description Features the plan unlocks.
       * @example [
       *       "friaWizard",
       *       "sso"
       *     ]
       */
      features: string[];
    };
    BillingPlanResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['BillingPlanDto'];
    };
    MfaSetupDto: {
      /** @description Base32 TOTP secret, for manual entry in an authenticator app. */
      secret: string;
      /** @example otpauth://totp/Governance%20Service:ada%40example.com?secret=... */
      otpauthUrl: string;
      /**
       * @description The otpauthUrl as a QR code: a PNG data URL.
       * @example data:image/png;base64,...
       */
      qrCode: string;
    };
    MfaSetupResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MfaSetupDto'];
    };
    BackupCodesDto: {
      /**
       * @description Ten single-use backup codes, shown only in this response; any earlier set no longer works.
       * @example [
       *       "7KQ2M-9XW4D"
       *     ]
       */
      backupCodes: string[];
    };
    BackupCodesResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['BackupCodesDto'];
    };
    MfaCodeDto: {
      /**
       * @description A six-digit TOTP code from the authenticator app (one step of 30 s either side is accepted; a code is accepted once in its step).
       * @example 123456
       */
      code: string;
    };
    MfaCodeOrBackupCodeDto: {
      /**
       * @description A six-digit TOTP code from the authenticator app (one step of 30 s either side is accepted; a code is accepted once in its step), or an unused backup code (`XXXXX-XXXXX`, case and hyphens ignored).
       * @example 123456
       */
      code: string;
    };
    LoginResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['LoginResultDto'];
    };
    MfaLoginDto: {
      /**
       * @description A six-digit TOTP code from the authenticator app (one step of 30 s either side is accepted; a code is accepted once in its step), or an unused backup code (`XXXXX-XXXXX`, case and hyphens ignored).
       * @example 123456
       */
      code: string;
      /** @description The tempToken returned by /auth/login (valid 5 minutes). */
      tempToken: string;
    };
    MfaResendDto: {
      /** @enum {boolean} */
      available: false;
      /** @example TOTP codes are generated by your authenticator app; nothing is sent. */
      message: string;
    };
    MfaResendResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MfaResendDto'];
    };
    SecuritySettingsDto: {
      mfaEnabled: boolean;
      /** @description Unused backup codes (0 when MFA is off). */
      backupCodesRemaining: number;
      /**
       * Format: date-time
       * @description Null for accounts without a password.
       */
      passwordChangedAt: string | null;
      /** @description Whole days since the password was set. */
      passwordAgeDays: number | null;
      /**
       * @description Always empty: trusted devices are not implemented.
       * @example []
       */
      trustedDevices: unknown[];
    };
    SecuritySettingsResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SecuritySettingsDto'];
    };
    ApiKeyScopeDto: {
      /** @description Agents whose data the key may see; null means every agent. */
      agentIds: string[] | null;
      /** @description The key may only read. */
      readOnly: boolean;
    };
    CreatedApiKeyDto: {
      id: string;
      /** @example CI pipeline */
      name: string;
      /**
       * @description The key, shown this once: only its SHA-256 is stored and it cannot be recovered. Send it as `X-API-Key`.
       * @example svc_live_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX
       */
      key: string;
      /** @example svc_live_Zk3mQ9xT2bLw */
      prefix: string;
      scope: components['schemas']['ApiKeyScopeDto'];
      /** Format: date-time */
      createdAt: string;
    };
    CreatedApiKeyResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CreatedApiKeyDto'];
    };
    ApiKeyScopeInputDto: {
      /**
       * @description Agents of the caller’s organization whose data the key may see (1 to 100 agent ids). Absent or null: every agent. On PATCH, absent leaves the restriction unchanged and null removes it. An empty list is refused (it would read as either "none" or "all").
       * @example [
       *       "661f0c2a9b1e4c0012345678"
       *     ]
       */
      agentIds?: string[] | null;
      /** @description A read-only key may only read (GET); writes answer 403 FORBIDDEN. Default false. */
      readOnly?: boolean;
    };
    CreateApiKeyDto: {
      /** @example CI pipeline */
      name: string;
      /** @description Default: every agent, writable. */
      scope?: components['schemas']['ApiKeyScopeInputDto'];
    };
    ApiKeyDto: {
      id: string;
      /** @example CI pipeline */
      name: string;
      /**
       * @description The start of the key, to recognise it; the full key is shown only when created.
       * @example svc_live_Zk3mQ9xT2bLw
       */
      prefix: string;
      scope: components['schemas']['ApiKeyScopeDto'];
      /** Format: date-time */
      createdAt: string;
      /**
       * Format: date-time
       * @description Last authenticated use, to the minute.
       */
      lastUsedAt: string | null;
    };
    PaginationDto: {
      /** @example 1 */
      page: number;
      /** @example 20 */
      limit: number;
      /** @example 42 */
      total: number;
      /** @example 3 */
      totalPages: number;
      /**
       * @description Only on lists that stop counting (the audit log with filters): `total` is then a lower bound, the matches counted before the count stopped. Later pages still answer.
       * @enum {boolean}
       */
      totalCapped?: true;
    };
    ApiKeyPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ApiKeyDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    ApiKeyResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ApiKeyDto'];
    };
    UpdateApiKeyDto: {
      /** @example CI pipeline (staging) */
      name?: string;
      /** @description Merged into the current scope: only the fields present change. */
      scope?: components['schemas']['ApiKeyScopeInputDto'];
    };
    DeletedDto: {
      id: string;
      /** @enum {boolean} */
      deleted: true;
    };
    DeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['DeletedDto'];
    };
    StreamTokenDto: {
      /** @description Single-use token, valid 60 seconds; present it as `?token=` when opening the event stream. */
      token: string;
      /** Format: date-time */
      expiresAt: string;
    };
    StreamTokenResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['StreamTokenDto'];
    };
    SessionTokenDto: {
      /** @description JWT (HS256) for the new session. */
      token: string;
    };
    SessionTokenResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SessionTokenDto'];
    };
    RevokedCountDto: {
      /**
       * @description How many live sessions this call revoked.
       * @example 2
       */
      revoked: number;
    };
    RevokedCountResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['RevokedCountDto'];
    };
    RevokeSessionDto: {
      /**
       * @description Session id: the id of the audit entry that opened it (as listed by GET /auth/sessions).
       * @example 65f1c0ffee0000000000abcd
       */
      sessionId: string;
    };
    SessionDto: {
      /** @description Id of the audit entry that opened the session. */
      sessionId: string;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      expiresAt: string;
      ip: string | null;
      userAgent: string | null;
      /** @description True for the session of the token making this request. */
      current: boolean;
    };
    SessionListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SessionDto'][];
    };
    SessionTimeoutDto: {
      /**
       * @example 8h
       * @enum {string}
       */
      sessionTimeout: '1h' | '8h' | '24h' | '7d';
    };
    SessionTimeoutResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SessionTimeoutDto'];
    };
    UserOrganizationDto: {
      organizationId: string;
      name: string;
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
      /** @enum {string} */
      plan: 'sandbox' | 'scale' | 'governance' | 'enterprise' | 'custom';
    };
    UserOrganizationListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['UserOrganizationDto'][];
    };
    SwitchOrgResultDto: {
      /** @description JWT (HS256) bound to the organization switched to. */
      token: string;
      organization: components['schemas']['OrganizationDto'];
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
    };
    SwitchOrgResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SwitchOrgResultDto'];
    };
    SwitchOrgDto: {
      /** @example 65f1c0ffee0000000000abcd */
      organizationId: string;
    };
    UserResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['UserDto'];
    };
    UpdateProfileDto: {
      /** @example Ada Lovelace */
      name?: string;
      /**
       * @description BCP 47 language tag; stored in canonical form.
       * @example en-GB
       */
      locale?: string;
      /**
       * @description IANA time zone name.
       * @example Europe/Paris
       */
      timezone?: string;
    };
    LoginActivityDto: {
      id: string;
      /** Format: date-time */
      createdAt: string;
      ip: string | null;
      userAgent: string | null;
      /**
       * @description password, magic_link, mfa, oauth, sso …
       * @example password
       */
      method: string;
      success: boolean;
    };
    LoginActivityPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['LoginActivityDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    TeamMemberDto: {
      userId: string;
      /** @example Ada Lovelace */
      name: string;
      /** Format: email */
      email: string;
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
      /**
       * Format: date-time
       * @description When the membership was created.
       */
      joinedAt: string;
      /** @description False while the member is suspended. */
      isActive: boolean;
      mfaEnabled: boolean;
      /**
       * @description The address of the member’s last sign-in into this organization (never another organization’s).
       * @example 203.0.113.7
       */
      lastLoginIp: string | null;
      /**
       * Format: date-time
       * @description When the user account was created; may precede joinedAt.
       */
      createdAt: string;
    };
    TeamMemberPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TeamMemberDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    TeamMemberResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TeamMemberDto'];
    };
    ChangeRoleDto: {
      /**
       * @description Several owners are allowed. Only an owner may grant the owner role or change an owner.
       * @enum {string}
       */
      role: 'owner' | 'admin' | 'member' | 'viewer';
    };
    SuspendMemberDto: {
      /**
       * @description Optional; only `false` is accepted. Reactivation has its own route.
       * @enum {boolean}
       */
      isActive?: false;
    };
    InviterDto: {
      id: string;
      /** Format: email */
      email: string | null;
    };
    InvitationDto: {
      id: string;
      /** Format: email */
      email: string;
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
      /**
       * Format: date-time
       * @description Creation (or last resend) plus 7 days.
       */
      expiresAt: string;
      invitedBy: components['schemas']['InviterDto'];
      /** Format: date-time */
      createdAt: string;
    };
    InvitationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['InvitationDto'];
    };
    CreateInvitationDto: {
      /**
       * Format: email
       * @example grace@example.com
       */
      email: string;
      /**
       * @description Role given on acceptance. Only an owner may invite an owner.
       * @default member
       * @enum {string}
       */
      role?: 'owner' | 'admin' | 'member' | 'viewer';
    };
    InvitationPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['InvitationDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    InviteValidationDto: {
      valid: boolean;
      /** @description Only when valid. */
      organizationName?: string;
      /**
       * @description Only when valid.
       * @enum {string}
       */
      role?: 'owner' | 'admin' | 'member' | 'viewer';
      /**
       * Format: email
       * @description Only when valid.
       */
      inviterEmail?: string | null;
      /**
       * @description Only when not valid.
       * @enum {string}
       */
      reason?: 'expired' | 'revoked' | 'used' | 'not_found';
    };
    InviteValidationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['InviteValidationDto'];
    };
    AcceptedInvitationDto: {
      /** @description JWT (HS256) for a session in the organization of the invitation. */
      token: string;
      user: components['schemas']['UserDto'];
      organization: components['schemas']['OrganizationDto'];
      /** @enum {string} */
      role: 'owner' | 'admin' | 'member' | 'viewer';
    };
    AcceptInvitationDto: {
      /**
       * @description Required when the invited e-mail has no account yet; ignored otherwise.
       * @example Grace Hopper
       */
      name?: string;
      /**
       * @description Required when the invited e-mail has no account yet (at least 10 characters with an uppercase letter, a lowercase letter and a digit); ignored otherwise.
       * @example Correct-Horse-9
       */
      password?: string;
    };
    SsoDomainStateDto: {
      /** @example bigcorp.example */
      domain: string;
      /** @enum {string} */
      status: 'pending' | 'verified' | 'failing';
    };
    RoleMappingRuleDto: {
      /**
       * @description An RE2 regular expression (linear time), matched anywhere in a group name, case-sensitive.
       * @example ^governance-admins$
       */
      pattern: string;
      /**
       * @description A directory group never grants ownership.
       * @enum {string}
       */
      role: 'admin' | 'member' | 'viewer';
    };
    OidcSettingsView: {
      issuer: string;
      clientId: string;
      /** @description Whether a client secret is stored (it is never shown). */
      clientSecretSet: boolean;
      scopes: string[];
      groupsClaim: string;
      /** @description The redirect URI to register at the IdP. */
      redirectUri: string;
    };
    CertificateView: {
      subject: string;
      /** Format: date-time */
      validFrom: string;
      /** Format: date-time */
      validTo: string;
      /** @description SHA-256 fingerprint, colon-separated hex. */
      fingerprint256: string;
    };
    SamlSettingsView: {
      entryPoint: string;
      idpCertificate: components['schemas']['CertificateView'];
      idpIssuer: string | null;
      groupsAttribute: string;
      logoutUrl: string | null;
      /** @description The SP entity id to register at the IdP. */
      spEntityId: string;
      /** @description The assertion consumer service URL (HTTP-POST). */
      acsUrl: string;
      /** @description The SP metadata document. */
      metadataUrl: string;
      /** @description The single-logout service URL (HTTP-POST) to register at the IdP. */
      sloUrl: string;
    };
    SsoConfigDto: {
      /** @enum {string} */
      provider: 'oidc' | 'saml';
      /** @description The domains the organization claims, as written (by this PUT or `POST /sso/domains`); only verified ones route sign-in, provision accounts or enforce anything (see `domains`). */
      emailDomains: string[];
      /** @description Each claimed domain’s state; `GET /sso/domains` has the records. */
      domains: components['schemas']['SsoDomainStateDto'][];
      requireMfaEvenWithSso: boolean;
      /** @description Whether sign-in through the SSO is enforced for the verified domains. */
      enforceSso: boolean;
      /**
       * Format: date-time
       * @description When the current IdP settings last passed `POST /sso/config/test`; null when they have not (a failed test, or settings changed since). `enforceSso` can be turned on only while it is set.
       */
      testPassedAt: string | null;
      roleMappingRules: components['schemas']['RoleMappingRuleDto'][];
      oidc?: components['schemas']['OidcSettingsView'];
      saml?: components['schemas']['SamlSettingsView'];
      /** Format: date-time */
      updatedAt: string;
      /** @description User id of the last editor. */
      updatedBy: string | null;
    };
    SsoConfigResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoConfigDto'];
    };
    OidcSettingsDto: {
      /** @example https://login.microsoftonline.com/<tenant>/v2.0 */
      issuer: string;
      clientId: string;
      /** @description Write-only; stored encrypted. Required when there is none yet or the issuer or client id changes; omitted, the stored one is kept. */
      clientSecret?: string;
      /** @description Default `openid email profile`; `openid` is always added. */
      scopes?: string[];
      /** @description The ID-token claim listing groups (default `groups`). */
      groupsClaim?: string;
    };
    SamlSettingsDto: {
      /** @description The IdP’s single sign-on URL (HTTP-Redirect binding). */
      entryPoint: string;
      /** @description The IdP’s signing certificate: PEM, or its base64 body as IdP metadata shows it. */
      idpCertificate: string;
      /** @description The IdP’s entity id; when set, responses must name it. */
      idpIssuer?: string;
      /** @description The attribute listing groups (default `groups`). */
      groupsAttribute?: string;
      /** @description The IdP’s single logout URL. */
      logoutUrl?: string;
    };
    PutSsoConfigDto: {
      /** @enum {string} */
      provider: 'oidc' | 'saml';
      /**
       * @description E-mail domains that sign in through this organization; each belongs to one organization at most. Read as `POST /sso/domains` reads one: NFKC-normalised, lower-cased, without a trailing dot.
       * @example [
       *       "example.com"
       *     ]
       */
      emailDomains: string[];
      /**
       * @description SSO logins then also ask for the TOTP code.
       * @default false
       */
      requireMfaEvenWithSso?: boolean;
      /**
       * @description Users whose address is in a verified domain of the organization must sign in through its SSO: password login, magic links, social login, password reset and `switch-org` into the organization answer 403 `SSO_REQUIRED` (owners keep password + TOTP, audited as `auth.sso_break_glass`). Needs a verified domain, and the IdP settings being saved must be the ones whose last `POST /sso/config/test` passed.
       * @default false
       */
      enforceSso?: boolean;
      /** @description In order; the first rule matching any of the user’s groups gives the role; none: member. */
      roleMappingRules?: components['schemas']['RoleMappingRuleDto'][];
      /** @description Required with provider oidc. */
      oidc?: components['schemas']['OidcSettingsDto'];
      /** @description Required with provider saml. */
      saml?: components['schemas']['SamlSettingsDto'];
    };
    SsoConfigDeletedDto: {
      /** @enum {boolean} */
      deleted: true;
    };
    SsoConfigDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoConfigDeletedDto'];
    };
    SsoCheckDto: {
      /** @example discovery */
      name: string;
      ok: boolean;
      detail: string;
    };
    SsoTestResultDto: {
      /** @description Whether every check passed. */
      ok: boolean;
      checks: components['schemas']['SsoCheckDto'][];
    };
    SsoTestResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoTestResultDto'];
    };
    DnsRecordDto: {
      /** @enum {string} */
      type: 'TXT';
      /** @example _governance-challenge.bigcorp.example */
      name: string;
      /** @description The value the TXT record must hold, exactly. */
      value: string;
    };
    SsoDomainDto: {
      /** @example bigcorp.example */
      domain: string;
      /**
       * @description `pending`: not proven yet, routes nothing. `verified`: the record was found, and the domain routes sign-in, provisions accounts and enforces SSO. `failing`: the record has been missing for 7 days; the domain no longer routes until it is verified again.
       * @enum {string}
       */
      status: 'pending' | 'verified' | 'failing';
      /** @description The TXT record to publish (and keep) at the domain’s DNS. */
      record: components['schemas']['DnsRecordDto'];
      /** Format: date-time */
      verifiedAt: string | null;
      /** Format: date-time */
      lastCheckedAt: string | null;
    };
    SsoDomainListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoDomainDto'][];
    };
    SsoDomainResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoDomainDto'];
    };
    ClaimSsoDomainDto: {
      /**
       * @description An e-mail domain the organization owns.
       * @example bigcorp.example
       */
      domain: string;
    };
    SsoInitiateResultDto: {
      /** @description Where to send the browser: the IdP’s authorization URL for an SSO domain, else APP_URL/login?sso=unavailable. */
      redirectUrl: string;
    };
    SsoInitiateResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoInitiateResultDto'];
    };
    SsoInitiateDto: {
      /**
       * @description The user’s e-mail; its domain picks the organization.
       * @example alice@example.com
       */
      email: string;
    };
    OAuthTokenDto: {
      /** @description The session JWT the SSO or social callback left in the svc_oauth_token cookie. */
      token: string;
    };
    OAuthTokenResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['OAuthTokenDto'];
    };
    SsoMfaExchangeDto: {
      /** @description The tempToken to post with a TOTP code to /auth/mfa/login. */
      tempToken: string;
    };
    SsoMfaExchangeResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SsoMfaExchangeDto'];
    };
    SamlRedirectDto: {
      /** @description Where to send the browser: the IdP’s SAML entry point (or logout URL) carrying a deflated request on the HTTP-Redirect binding, signed in the query when the service has a SAML signing key. */
      redirectUrl: string;
    };
    SamlRedirectResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SamlRedirectDto'];
    };
    SamlInitiateDto: {
      /**
       * @description The organization that signs in with SAML.
       * @example 65f1c0ffee0000000000abcd
       */
      organizationId: string;
    };
    ScimTokenCreatedDto: {
      /**
       * @description The token, shown this once: `scim_` and 48 hexadecimal characters. Paste it into the IdP.
       * @example scim_3f9a…
       */
      token: string;
      /** Format: date-time */
      createdAt: string;
    };
    ScimTokenCreatedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScimTokenCreatedDto'];
    };
    ScimTokenStatusDto: {
      exists: boolean;
      /** Format: date-time */
      createdAt: string | null;
      /** Format: date-time */
      lastUsedAt: string | null;
    };
    ScimTokenStatusResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScimTokenStatusDto'];
    };
    ScimTokenDeletedDto: {
      /** @description Whether a token existed (and is now revoked). */
      deleted: boolean;
    };
    ScimTokenDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScimTokenDeletedDto'];
    };
    AuditJwkDto: {
      /** @example OKP */
      kty: string;
      /** @example Ed25519 */
      crv: string;
      /** @description The raw public key, base64url. */
      x: string;
      /** @description The key id. */
      kid: string;
      /** @example EdDSA */
      alg: string;
      /** @example sig */
      use: string;
    };
    AuditPublicKeyDto: {
      keyId: string;
      /** @enum {string} */
      algorithm: 'Ed25519';
      /** @description SubjectPublicKeyInfo, PEM. */
      publicKeyPem: string;
      jwk: components['schemas']['AuditJwkDto'];
      /**
       * Format: date-time
       * @description When the service first used the key.
       */
      createdAt: string;
      /** @description Whether the service signs with this key now (the others are older keys). */
      current: boolean;
    };
    AuditPublicKeysDto: {
      keys: components['schemas']['AuditPublicKeyDto'][];
    };
    AuditPublicKeysResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditPublicKeysDto'];
    };
    AuditActorDto: {
      /** @enum {string} */
      type: 'user' | 'api_key' | 'agent' | 'scim' | 'system';
      id: string | null;
      email: string | null;
    };
    AuditEntryDto: {
      id: string;
      /** @description Position in the organization chain: 1, 2, 3 … without gaps. */
      sequence: number;
      organizationId: string;
      /** @example auth.login */
      eventType: string;
      userId: string | null;
      actor: components['schemas']['AuditActorDto'];
      targetType: string | null;
      targetId: string | null;
      metadata: {
        [key: string]: unknown;
      };
      ip: string | null;
      userAgent: string | null;
      /** Format: date-time */
      createdAt: string;
      /** @description Hash of the previous entry; 64 zeros for the first. */
      prevHash: string;
      /** @description SHA-256 hex of prevHash + "\n" + RFC 8785 canonical JSON of the entry without id, prevHash, hash. */
      hash: string;
    };
    AuditEntryPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditEntryDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    BrokenAtDto: {
      /** @description Sequence of the failing entry (after a gap: the first entry past it). */
      sequence: number;
      /** @description The failing entry; null when it is missing (`truncated`, or a gap at the end). */
      id: string | null;
      /**
       * @description `verified_prefix_mismatch`: the entry up to which an earlier verification passed now carries another hash (rewritten below the verified prefix; `?full=true` finds the first changed entry). `checkpoint_mismatch`: the entry of the highest signed checkpoint carries another hash. `truncated`: the chain ends before an entry verified or signed earlier.
       * @enum {string}
       */
      reason:
        | 'sequence_gap'
        | 'prev_hash_mismatch'
        | 'hash_mismatch'
        | 'verified_prefix_mismatch'
        | 'checkpoint_mismatch'
        | 'truncated';
    };
    AuditVerifyDto: {
      valid: boolean;
      totalEntries: number;
      /** Format: date-time */
      firstEntry: string | null;
      /** Format: date-time */
      lastEntry: string | null;
      /** @description The first sequence this verification checked: 1 with `full=true` or on a first run, else the one after the prefix verified before. */
      verifiedFrom: number;
      /** @description Present when valid is false: the first entry that fails. */
      brokenAt?: components['schemas']['BrokenAtDto'];
      /** @description With `content=true`: the traces whose content was checked, each against the `metadata.contentHash` of its latest audit entry that records one (intact, altered, erased or unhashed; the intact ones are the rest). Every trace of the organization that has an audit entry, checked in full on every call. */
      contentChecked?: number;
      /** @description With `content=true`: traces whose stored content (inputContext, outputDecision, metadata, rationale) no longer hashes, with their `contentSalt`, to the hash their latest entry records; whose salt is gone while their entry records a hash; or that no longer point at that entry (the entry GET /traces/{id}/verify reads). The chain itself may still be valid: the content lies outside it. */
      contentAltered?: number;
      /** @description With `content=true`: the ids of altered traces, at most 20, the most recently recorded first (`contentAltered` counts them all); GET /traces/{id}/verify checks one. */
      contentAlteredIds?: string[];
      /** @description With `content=true`: traces whose subject’s content was erased (`erasedAt`): nothing left to check. */
      contentErased?: number;
      /** @description With `content=true`: traces none of whose audit entries records a content hash (stored before content hashing): their content cannot be checked. A trace whose entry records a hash is never unhashed, whatever its own columns say (a missing salt is `altered`). */
      contentUnhashed?: number;
    };
    AuditVerifyResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditVerifyDto'];
    };
    AuditCheckpointDto: {
      id: string;
      organizationId: string;
      /** @description The chain head signed: its sequence. */
      sequence: number;
      /** @description The hash of the entry at `sequence`. */
      hash: string;
      /** Format: date-time */
      createdAt: string;
      /** @description RFC 7638 thumbprint of the signing key (see GET /audit/public-key). */
      keyId: string;
      /** @description base64url Ed25519 signature of the UTF-8 bytes of the RFC 8785 canonical JSON of `{organizationId, sequence, hash, createdAt, keyId}`. */
      signature: string;
    };
    AuditCheckpointPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditCheckpointDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    AuditCheckpointResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditCheckpointDto'];
    };
    AuditEntryResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AuditEntryDto'];
    };
    FlaggedResultDto: {
      id: string;
      /** @enum {string} */
      status: 'approved' | 'flagged' | 'blocked';
      confidence: number;
      message: string;
      /** @description The pending review item created for the trace. */
      reviewItemId: string;
    };
    FlaggedEnvelopeDto: {
      /** @enum {boolean} */
      success: true;
      /** @enum {string} */
      code: 'SVC_FLAGGED_FOR_REVIEW';
      data: components['schemas']['FlaggedResultDto'];
    };
    PolicyResultDto: {
      policyId: string;
      name: string;
      /** @enum {string} */
      outcome: 'block' | 'flag';
      /** @description The PII types its containsPii conditions found in the trace: types only, never the values. Absent when none did. */
      piiEntities?: (
        | 'email'
        | 'phone'
        | 'creditCard'
        | 'iban'
        | 'ipAddress'
        | 'usSsn'
        | 'ukNino'
        | 'deTaxId'
        | 'frNir'
        | 'esDni'
        | 'itFiscalCode'
        | 'nlBsn'
        | 'plPesel'
      )[];
    };
    BlockedResultDto: {
      id: string;
      /** @enum {string} */
      status: 'blocked';
      confidence: number;
      /** @description The policies that matched. */
      policies: components['schemas']['PolicyResultDto'][];
    };
    BlockedEnvelopeDto: {
      /** @enum {boolean} */
      success: false;
      /** @enum {string} */
      code: 'SVC_BLOCKED_BY_POLICY';
      error: string;
      data: components['schemas']['BlockedResultDto'];
    };
    DuplicateDataDto: {
      /** @description Id of the trace created by the first request with this key. */
      id: string;
    };
    DuplicateEnvelopeDto: {
      /** @enum {boolean} */
      success: false;
      /** @enum {string} */
      code: 'SVC_DUPLICATE_REQUEST';
      error: string;
      data: components['schemas']['DuplicateDataDto'];
    };
    IngestResultDto: {
      id: string;
      /** @enum {string} */
      status: 'approved' | 'flagged' | 'blocked';
      confidence: number;
      message: string;
    };
    IngestResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IngestResultDto'];
    };
    InputContextDto: {
      /** @description Input the agent received (schema 2026-04-11: ≤ 50,000 chars). */
      prompt: string;
      systemPrompt?: string | null;
      /** @description Context the agent saw; ≤ 100 KiB as UTF-8 JSON (schema 2026-04-11). */
      context?: {
        [key: string]: unknown;
      } | null;
      conversationId?: string | null;
    };
    ToolCallDto: {
      /** @example lookup_order */
      name: string;
      /** @description Arguments as the agent passed them (any JSON). */
      arguments?:
        | {
            [key: string]: unknown;
          }
        | unknown[]
        | string
        | number
        | boolean
        | null;
    };
    OutputDecisionDto: {
      /**
       * @description Action type, e.g. llm_response, tool_call.
       * @example llm_response
       */
      action: string;
      /** @description Agent output text (may be empty). */
      text: string;
      /** @description ≤ 10 KiB as UTF-8 JSON (schema 2026-04-11). */
      actionObject?: {
        [key: string]: unknown;
      } | null;
      rationale?: string | null;
      alternatives?: unknown[] | null;
      toolCalls?: components['schemas']['ToolCallDto'][] | null;
    };
    IngestTraceDto: {
      inputContext: components['schemas']['InputContextDto'];
      outputDecision: components['schemas']['OutputDecisionDto'];
      metadata?: {
        [key: string]: unknown;
      } | null;
      /** @description Agent of the trace. With an agent key it must be the key’s own agent (else 403); with a workspace key it is required and must lie in the key’s scope. */
      agentId?: string | null;
      /** @description Override; when absent the service estimates it from the output text before policies run. */
      confidence?: number | null;
      rationale?: string | null;
      /** @description Your own opaque reference of the person the decision is about (a customer or account id), 1–200 characters. Stored only as an HMAC under the organization’s subject key and never returned (traces show `hasSubject`); it is how GET /subjects/{ref}/decisions, the erasure and legal holds find the decisions. OTLP: the span attribute `governance.subject.ref`. */
      subjectRef?: string | null;
    };
    TraceOutputDecisionDto: {
      /**
       * @description Action type, e.g. llm_response, tool_call.
       * @example llm_response
       */
      action: string;
      /** @description Agent output text (may be empty). */
      text: string;
      /** @description ≤ 10 KiB as UTF-8 JSON (schema 2026-04-11). */
      actionObject?: {
        [key: string]: unknown;
      } | null;
      rationale?: string | null;
      alternatives?: unknown[] | null;
      toolCalls?: components['schemas']['ToolCallDto'][] | null;
      /** @description The decision a human set by correcting the trace (CPI feedback). */
      decision?: string;
      /** @description After a correction: the decision before the first one (the agent’s action). */
      originalDecision?: string | null;
      /** @description After a correction: the reviewer’s notes. */
      correctionNotes?: string | null;
      /** @description After a correction that gave one. */
      correctedConfidence?: number;
    };
    TraceDto: {
      id: string;
      organizationId: string;
      agentId: string;
      /** @enum {string} */
      status: 'approved' | 'flagged' | 'blocked' | 'success';
      confidence: number;
      /** @description As ingested; null once the subject’s content was erased (`erasedAt`). */
      inputContext: components['schemas']['InputContextDto'] | null;
      /** @description As ingested, with what feedback set; null once erased. */
      outputDecision: components['schemas']['TraceOutputDecisionDto'] | null;
      /** @description The caller’s metadata as sent (any JSON object), and the members the service sets: `autoApprovedBy`, `approvedBy`, `approvedAt`. Null once erased. */
      metadata:
        | ({
            /** @description The approval pattern that approved a flagged trace. */
            autoApprovedBy?: string;
            /** @description After CPI approval: the approver’s e-mail, or `apiKey:<id>`. */
            approvedBy?: string;
            /**
             * Format: date-time
             * @description After CPI approval.
             */
            approvedAt?: string;
          } & {
            [key: string]: unknown;
          })
        | null;
      rationale: string | null;
      /**
       * @description Schema version in force at ingestion.
       * @example 2026-04-11
       */
      schemaVersion: string;
      humanOverride: boolean;
      /** @description Policies that matched. */
      policyResults: components['schemas']['PolicyResultDto'][];
      reviewItemId: string | null;
      /** @description Whether the trace was sent with a `subjectRef`. The reference itself is stored only as an HMAC and never returned. */
      hasSubject: boolean;
      /** @description The random salt (32 hex) of the content hash in the trace’s audit entry: with it, the content can be checked against an audit export offline (packages/audit-verify). Null for traces stored before content hashing and once erased. */
      contentSalt: string | null;
      /**
       * @description How many values of each PII type masking replaced in the content before it was stored (PATCH /organizations/current `piiMasking`): `{}` when masking was on and found none, null when it was off.
       * @example {
       *       "iban": 1,
       *       "email": 2
       *     }
       */
      piiMasked: {
        [key: string]: number;
      } | null;
      /**
       * Format: date-time
       * @description When the subject’s content was erased (POST /subjects/{ref}/erasure); null while it is held.
       */
      erasedAt: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    TracePage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TraceDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    SimilarTraceDto: {
      id: string;
      /** @enum {string} */
      status: 'approved' | 'flagged' | 'blocked' | 'success';
      confidence: number;
      /** @description pg_trgm similarity of prompt and output text. */
      similarity: number;
      /** Format: date-time */
      createdAt: string;
      /** @description First 200 characters of the prompt and output text. */
      excerpt: string;
    };
    SimilarTraceListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SimilarTraceDto'][];
    };
    TraceVerificationDto: {
      traceId: string;
      /**
       * @description `intact`, `altered` (changed outside the service), `erased` (the subject’s content was erased), `unhashed` (stored before content hashing).
       * @enum {string}
       */
      status: 'intact' | 'altered' | 'erased' | 'unhashed';
      /** @description The audit entry whose `metadata.contentHash` the content was checked against. */
      auditEntryId: string | null;
      /** @description The hash that entry records (64 hex); null when there is none. */
      contentHash: string | null;
    };
    TraceVerificationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TraceVerificationDto'];
    };
    TraceResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TraceDto'];
    };
    PolicyConditionDto: {
      /** @example outputDecision.text */
      field: string;
      /** @enum {string} */
      operator:
        | 'equals'
        | 'not_equals'
        | 'contains'
        | 'not_contains'
        | 'matches'
        | 'in'
        | 'not_in'
        | 'gt'
        | 'gte'
        | 'lt'
        | 'lte'
        | 'exists'
        | 'not_exists'
        | 'containsPii';
      /** @description Omitted (or true) for exists / not_exists; a list for in / not_in; a number for gt to lte; a list of PII types for containsPii. */
      value?: string | number | boolean | (string | number)[];
      /** @description containsPii only: the lowest detector score that counts (default 0.5). */
      minScore?: number;
    };
    PolicyDto: {
      id: string;
      /** @example No e-mail addresses in answers */
      name: string;
      description: string | null;
      /** @enum {string} */
      outcome: 'block' | 'flag';
      conditions: components['schemas']['PolicyConditionDto'][];
      /** @enum {string} */
      match: 'all' | 'any';
      /** @description Empty: every agent. */
      agentIds: string[];
      priority: number;
      isActive: boolean;
      /** @description The template it was created from. */
      templateId: string | null;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    PolicyPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['PolicyDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    PolicyTemplateDto: {
      /** @example email-address */
      id: string;
      name: string;
      description: string;
      /** @enum {string} */
      outcome: 'block' | 'flag';
      conditions: components['schemas']['PolicyConditionDto'][];
    };
    PolicyTemplateListResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['PolicyTemplateDto'][];
    };
    PolicyResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['PolicyDto'];
    };
    CreatePolicyDto: {
      /** @example Blocks answers that reveal an e-mail address. */
      description?: string | null;
      /**
       * @default all
       * @enum {string}
       */
      match?: 'all' | 'any';
      /** @description Agents of the caller’s organization the policy applies to; empty (the default) means every agent. */
      agentIds?: string[];
      /**
       * @description Lower runs (and is reported) first.
       * @default 100
       */
      priority?: number;
      /**
       * @description Inactive policies are kept but never evaluated.
       * @default true
       */
      isActive?: boolean;
      /**
       * @description Creates the policy from a template (`GET /policies/templates`); only `name` may be sent beside it.
       * @example email-address
       */
      templateId?: string;
      /**
       * @description Required unless templateId is given (then it defaults to the template’s name).
       * @example No e-mail addresses in answers
       */
      name?: string;
      /**
       * @description Required unless templateId is given.
       * @enum {string}
       */
      outcome?: 'block' | 'flag';
      /** @description 1 to 20 conditions `{field, operator, value}`. Fields: inputContext.prompt, inputContext.systemPrompt, outputDecision.text, outputDecision.action, toolCalls.name, confidence, agentId, metadata.<path>. Operators: equals, not_equals, contains, not_contains, matches, in, not_in, gt, gte, lt, lte, exists, not_exists, containsPii. `matches` takes an RE2 pattern (at most 512 characters, case-insensitive). `containsPii` takes a list of PII types (email, phone, creditCard, iban, ipAddress, usSsn, ukNino, deTaxId, frNir, esDni, itFiscalCode, nlBsn, plPesel) and an optional `minScore` (0 to 1, default 0.5): it holds when the text holds a value of one of them that its detector validates (checksums, issuer ranges; docs/agent-builders.md, "PII detectors"). Each refusal is a detail named by its path (`conditions[1].value`). */
      conditions?: components['schemas']['PolicyConditionDto'][];
    };
    UpdatePolicyDto: {
      /** @example Blocks answers that reveal an e-mail address. */
      description?: string | null;
      /**
       * @default all
       * @enum {string}
       */
      match?: 'all' | 'any';
      /** @description Agents of the caller’s organization the policy applies to; empty (the default) means every agent. */
      agentIds?: string[];
      /**
       * @description Lower runs (and is reported) first.
       * @default 100
       */
      priority?: number;
      /**
       * @description Inactive policies are kept but never evaluated.
       * @default true
       */
      isActive?: boolean;
      name?: string;
      /** @enum {string} */
      outcome?: 'block' | 'flag';
      /** @description Replaces the whole list. 1 to 20 conditions `{field, operator, value}`. Fields: inputContext.prompt, inputContext.systemPrompt, outputDecision.text, outputDecision.action, toolCalls.name, confidence, agentId, metadata.<path>. Operators: equals, not_equals, contains, not_contains, matches, in, not_in, gt, gte, lt, lte, exists, not_exists, containsPii. `matches` takes an RE2 pattern (at most 512 characters, case-insensitive). `containsPii` takes a list of PII types (email, phone, creditCard, iban, ipAddress, usSsn, ukNino, deTaxId, frNir, esDni, itFiscalCode, nlBsn, plPesel) and an optional `minScore` (0 to 1, default 0.5): it holds when the text holds a value of one of them that its detector validates (checksums, issuer ranges; docs/agent-builders.md, "PII detectors"). Each refusal is a detail named by its path (`conditions[1].value`). */
      conditions?: components['schemas']['PolicyConditionDto'][];
    };
    AgentDto: {
      /** @example 661f0c2a9b1e4c0012345678 */
      id: string;
      /** @example Support triage bot */
      name: string;
      description: string | null;
      /**
       * @description The start of the agent’s live key, to recognise it; the full key is shown only once.
       * @example svc_agent_Zk3mQ9xT2bLw
       */
      keyPrefix: string | null;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    AgentPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AgentDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    CreatedAgentDto: {
      /** @example 661f0c2a9b1e4c0012345678 */
      id: string;
      /** @example Support triage bot */
      name: string;
      description: string | null;
      /**
       * @description The start of the agent’s live key, to recognise it; the full key is shown only once.
       * @example svc_agent_Zk3mQ9xT2bLw
       */
      keyPrefix: string | null;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      /**
       * @description The agent key, shown this once: only its SHA-256 is stored. Send it as `X-API-Key`; traces sent with it are attached to this agent.
       * @example svc_agent_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX
       */
      apiKey: string;
    };
    CreatedAgentResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CreatedAgentDto'];
    };
    CreateAgentDto: {
      /** @example Support triage bot */
      name: string;
      /**
       * @description Optional; blank or null stores no description.
       * @example Routes incoming tickets to the right queue.
       */
      description?: string | null;
    };
    AgentStatusCountsDto: {
      approved: number;
      flagged: number;
      blocked: number;
      success: number;
    };
    AgentAnalyticsDto: {
      totalTraces: number;
      byStatus: components['schemas']['AgentStatusCountsDto'];
      /**
       * @description Mean confidence of the agent’s traces, two decimals; null when there are none.
       * @example 0.87
       */
      averageConfidence: number | null;
      /**
       * @description Share of traces with `humanOverride` set, two decimals; null when there are none. Until human verdicts are recorded separately the denominator is every trace of the agent.
       * @example 0.05
       */
      humanOverrideRate: number | null;
      /** Format: date-time */
      lastTraceAt: string | null;
    };
    AgentDetailDto: {
      /** @example 661f0c2a9b1e4c0012345678 */
      id: string;
      /** @example Support triage bot */
      name: string;
      description: string | null;
      /**
       * @description The start of the agent’s live key, to recognise it; the full key is shown only once.
       * @example svc_agent_Zk3mQ9xT2bLw
       */
      keyPrefix: string | null;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      analytics: components['schemas']['AgentAnalyticsDto'];
    };
    AgentDetailResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AgentDetailDto'];
    };
    AgentResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AgentDto'];
    };
    UpdateAgentDto: {
      /** @example Support triage bot v2 */
      name?: string;
      /** @description Absent leaves the description unchanged; null or blank removes it. */
      description?: string | null;
    };
    RegeneratedAgentKeyDto: {
      /**
       * @description The new agent key, shown this once; the previous key is refused from now on.
       * @example svc_agent_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX
       */
      apiKey: string;
    };
    RegeneratedAgentKeyResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['RegeneratedAgentKeyDto'];
    };
    ApprovalPatternDto: {
      id: string;
      agentId: string;
      /** @description `outputDecision.action` of the traces, if any. */
      action: string | null;
      /** @description Ids of the policies that flagged the traces, sorted. */
      policyIds: string[];
      /** @enum {string} */
      status: 'observing' | 'pending_signoff' | 'active';
      /** @description Review decisions (approve or reject) counted. */
      observations: number;
      /** @description Of those, approvals. */
      approvals: number;
      /** @description approvals / observations, four decimals. */
      approvalRate: number | null;
      signedOffBy: string | null;
      /** Format: date-time */
      signedOffAt: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    ApprovalPatternPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ApprovalPatternDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    ApprovalPatternResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ApprovalPatternDto'];
    };
    MatchedPolicyDto: {
      policyId: string;
      name: string;
      /** @enum {string} */
      outcome: 'block' | 'flag';
      /** @description The PII types its containsPii conditions found: types only, never the values. Absent when none did. */
      piiEntities?: (
        | 'email'
        | 'phone'
        | 'creditCard'
        | 'iban'
        | 'ipAddress'
        | 'usSsn'
        | 'ukNino'
        | 'deTaxId'
        | 'frNir'
        | 'esDni'
        | 'itFiscalCode'
        | 'nlBsn'
        | 'plPesel'
      )[];
    };
    ReviewTraceExcerptDto: {
      /** @description The prompt, first 500 characters. */
      prompt: string;
      /** @description The output text, first 500 characters. */
      text: string;
      confidence: number;
    };
    ReviewItemDto: {
      id: string;
      traceId: string;
      agentId: string;
      /** @enum {string} */
      status: 'pending' | 'approved' | 'rejected' | 'escalated';
      matchedPolicies: components['schemas']['MatchedPolicyDto'][];
      assignedTo: string | null;
      /**
       * @description The decision that put the item in its status; for an item closed by feedback, the decision its status stands for (`approve` for approved, `reject` for rejected).
       * @enum {string|null}
       */
      decision: 'approve' | 'reject' | 'escalate' | null;
      /**
       * @description What closed the item: `review` (a reviewer’s approve or reject) or `feedback` (POST /cpi/ingest on its trace: approve → `approved`, correct → `rejected`; `decidedBy` is then null and `notes` are the feedback’s); null while the item is pending or escalated.
       * @enum {string|null}
       */
      resolution: 'review' | 'feedback' | null;
      notes: string | null;
      /** @description The reviewer’s user id; null for an item closed by feedback (its audit entry names the key). */
      decidedBy: string | null;
      /** Format: date-time */
      decidedAt: string | null;
      /** Format: date-time */
      createdAt: string;
      trace: components['schemas']['ReviewTraceExcerptDto'] | null;
    };
    ReviewItemPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ReviewItemDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    BulkFailureDto: {
      id: string;
      /** @example ALREADY_DECIDED */
      code: components['schemas']['ErrorCode'];
      error: string;
    };
    BulkDecisionResultDto: {
      /** @description Ids decided. */
      processed: string[];
      failed: components['schemas']['BulkFailureDto'][];
    };
    BulkDecisionResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['BulkDecisionResultDto'];
    };
    BulkReviewDecisionDto: {
      /** @enum {string} */
      decision: 'approve' | 'reject' | 'escalate';
      /** @description The reviewer’s reasons, kept on the item; null or blank keeps none. */
      notes?: string | null;
      /** @description Review item ids, 1 to 100; repeated ids count once. */
      ids: string[];
    };
    ReviewItemResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ReviewItemDto'];
    };
    ReviewDecisionDto: {
      /** @enum {string} */
      decision: 'approve' | 'reject' | 'escalate';
      /** @description The reviewer’s reasons, kept on the item; null or blank keeps none. */
      notes?: string | null;
    };
    AssignReviewItemDto: {
      /** @description The user id of a member of the organization, or null to unassign. */
      assignedTo: string | null;
    };
    /**
     * @description The name of an event: what a webhook subscribes to, the `type` of the event.
     * @enum {string}
     */
    GovernanceEventType:
      | 'trace.approved'
      | 'trace.flagged'
      | 'trace.blocked'
      | 'review.completed'
      | 'review.escalated'
      | 'fria.approved'
      | 'compliance.mapping.updated'
      | 'cpi.approved'
      | 'cpi.corrected'
      | 'alert.triggered'
      | 'alert.resolved'
      | 'audit.checkpoint'
      | 'webhook.test';
    WebhookDto: {
      id: string;
      /**
       * @description Write-only, like an integration’s URL: shown to every caller (owners included) masked as `<scheme>://<host>/…`. The path, query and credentials, which often carry the receiver’s token, are never answered or audited.
       * @example https://hooks.example.com/…
       */
      url: string;
      /**
       * @description The URL’s scheme and host (with a port other than the default), as `config.urlHost` of integrations.
       * @example https://hooks.example.com
       */
      urlHost: string;
      events: components['schemas']['GovernanceEventType'][];
      filterAgentId: string | null;
      description: string | null;
      isActive: boolean;
      /** @description Why delivery stopped (a 410 from the receiver). */
      disabledReason: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    WebhookPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['WebhookDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    CreatedWebhookDto: {
      id: string;
      /**
       * @description Write-only, like an integration’s URL: shown to every caller (owners included) masked as `<scheme>://<host>/…`. The path, query and credentials, which often carry the receiver’s token, are never answered or audited.
       * @example https://hooks.example.com/…
       */
      url: string;
      /**
       * @description The URL’s scheme and host (with a port other than the default), as `config.urlHost` of integrations.
       * @example https://hooks.example.com
       */
      urlHost: string;
      events: components['schemas']['GovernanceEventType'][];
      filterAgentId: string | null;
      description: string | null;
      isActive: boolean;
      /** @description Why delivery stopped (a 410 from the receiver). */
      disabledReason: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      /**
       * @description The signing secret, shown this once (stored encrypted).
       * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
       */
      secret: string;
    };
    CreatedWebhookResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CreatedWebhookDto'];
    };
    CreateWebhookDto: {
      /**
       * @description An http or https URL. Its host must resolve to public addresses only (loopback, private, link-local and reserved ones are refused, at creation and at each delivery) unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set. Write-only: answers show only its scheme and host (`urlHost`, and `url` masked as `<scheme>://<host>/…`).
       * @example https://hooks.example.com/governance
       */
      url: string;
      /**
       * @example [
       *       "trace.flagged",
       *       "review.completed"
       *     ]
       */
      events: components['schemas']['GovernanceEventType'][];
      /** @description Only this agent’s events (events about no agent are not sent). */
      filterAgentId?: string | null;
      description?: string | null;
    };
    WebhookResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['WebhookDto'];
    };
    UpdateWebhookDto: {
      /** @description A new URL (checked again by the SSRF guard). The masked `url` of this webhook sent back as read leaves the URL unchanged. */
      url?: string;
      events?: components['schemas']['GovernanceEventType'][];
      filterAgentId?: string | null;
      description?: string | null;
      /** @description `true` enables a webhook disabled by a 410 (and clears `disabledReason`). */
      isActive?: boolean;
    };
    WebhookSecretDto: {
      /** @description The new signing secret, shown this once. */
      secret: string;
      /**
       * Format: date-time
       * @description Until when the previous secret also signs; null without a grace period.
       */
      previousSecretExpiresAt: string | null;
    };
    WebhookSecretResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['WebhookSecretDto'];
    };
    RotateSecretDto: {
      /**
       * @description How long the old secret keeps signing beside the new one (both signatures are sent).
       * @default 0
       */
      gracePeriodSeconds?: number;
    };
    WebhookDeliveryDto: {
      id: string;
      /** @description The event id: the `webhook-id` header of every attempt. */
      eventId: string;
      /** @enum {string} */
      eventType:
        | 'trace.approved'
        | 'trace.flagged'
        | 'trace.blocked'
        | 'review.completed'
        | 'review.escalated'
        | 'fria.approved'
        | 'compliance.mapping.updated'
        | 'cpi.approved'
        | 'cpi.corrected'
        | 'alert.triggered'
        | 'alert.resolved'
        | 'audit.checkpoint'
        | 'webhook.test';
      /** @enum {string} */
      status: 'pending' | 'succeeded' | 'failed';
      attempts: number;
      responseStatus: number | null;
      /** @description The receiver’s answer, first 1 KiB. */
      responseBody: string | null;
      error: string | null;
      /** Format: date-time */
      nextAttemptAt: string | null;
      /** @description The delivery this one repeats. */
      redeliveryOf: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      completedAt: string | null;
    };
    WebhookDeliveryResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['WebhookDeliveryDto'];
    };
    WebhookDeliveryPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['WebhookDeliveryDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    CpiTotalsDto: {
      /** @description Traces of the organization. */
      traces: number;
      /** @description Traces now approved. */
      approved: number;
      /** @description Traces now flagged (not yet decided by a human). */
      flagged: number;
      /** @description Traces now blocked. */
      blocked: number;
      /** @description Traces a human verdict through POST /cpi/ingest set to success. */
      success: number;
      /** @description Traces with a human verdict: a review item approved or rejected, or feedback through /cpi/ingest. */
      humanVerdicts: number;
      /** @description Flagged traces with a human verdict (decided flags). */
      decidedFlags: number;
      /** @description Decided flags whose latest verdict is a rejection or a correction. */
      correctFlags: number;
      /** @description Decided flags whose latest verdict is an approval. */
      falseFlags: number;
      /** @description Traces with humanOverride true (latest feedback a correction). */
      humanOverrides: number;
    };
    ConfidenceByStatusDto: {
      approved: number | null;
      flagged: number | null;
      blocked: number | null;
      success: number | null;
    };
    CpiTrendPointDto: {
      /**
       * @description A UTC day.
       * @example 2026-11-25
       */
      date: string;
      /** @description Traces created that day. */
      traces: number;
      /** @description Traces whose latest human verdict fell on that day. */
      humanVerdicts: number;
      /** @description Of those, decided flags. */
      decidedFlags: number;
      /** @description A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      correctFlagRate: number | null;
      /** @description A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      falseFlagRate: number | null;
      /** @description A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      humanOverrideRate: number | null;
    };
    CpiRollupDto: {
      totals: components['schemas']['CpiTotalsDto'];
      /** @description correctFlags / decidedFlags. A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      correctFlagRate: number | null;
      /** @description falseFlags / decidedFlags. A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      falseFlagRate: number | null;
      /** @description humanOverrides / humanVerdicts. A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      humanOverrideRate: number | null;
      /** @description Mean confidence of the traces in each current status, 4 decimals; null with no trace. */
      averageConfidenceByStatus: components['schemas']['ConfidenceByStatusDto'];
      /** @description The last 30 UTC days, oldest first, today last; verdicts count on the day of the latest one. */
      trend: components['schemas']['CpiTrendPointDto'][];
    };
    CpiRollupResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CpiRollupDto'];
    };
    CpiAgentDto: {
      agentId: string;
      /** @description null when the agent was deleted. */
      name: string | null;
      traces: number;
      /** @description Traces of the agent with a human verdict. */
      humanVerdicts: number;
      /** @description Traces of the agent with humanOverride true. */
      overrides: number;
      /** @description overrides / traces. A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0. */
      overrideRate: number | null;
    };
    CorrectionReasonDto: {
      /** @description A feedbackNotes text of traces whose latest feedback is a correction, compared without case or extra white space (first 500 characters). */
      reason: string;
      count: number;
    };
    ConfidenceDeltaDto: {
      /** @description Corrections that gave a confidence of their own (the sample). */
      corrections: number;
      /** @description Mean confidence of the agent on those traces. */
      averageOriginal: number | null;
      /** @description Mean confidence the humans gave. */
      averageCorrected: number | null;
      /** @description averageCorrected − averageOriginal. */
      delta: number | null;
    };
    CorrectionDelayDto: {
      /** @enum {string} */
      bucket: '<1h' | '1-24h' | '1-7d' | '>7d';
      count: number;
    };
    CpiAnalyticsDto: {
      /** @description Agents with traces, most overrides first (then override rate, then id); at most 100. */
      agents: components['schemas']['CpiAgentDto'][];
      /** @description The 10 most frequent correction notes. */
      topCorrectionReasons: components['schemas']['CorrectionReasonDto'][];
      confidenceDelta: components['schemas']['ConfidenceDeltaDto'];
      /** @description Traces whose latest feedback is a correction, by the time from the trace to its first correction; all four buckets, in this order. */
      timeToCorrection: components['schemas']['CorrectionDelayDto'][];
    };
    CpiAnalyticsResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CpiAnalyticsDto'];
    };
    CpiIngestResultDto: {
      /** @description The trace the verdict was applied to. */
      traceId: string;
      /**
       * @description The trace’s status after the verdict (always success).
       * @enum {string}
       */
      status: 'success';
      /** @description True when a human corrected the decision, false when a human approved it. */
      humanOverride: boolean;
      /**
       * @description The verdict applied.
       * @enum {string}
       */
      action: 'approve' | 'correct';
    };
    CpiIngestResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CpiIngestResultDto'];
    };
    CpiIngestDto: {
      /** @description Id of a trace of the key’s organization. */
      traceId: string;
      /**
       * @description approve or correct; when absent, a correctedDecision means correct.
       * @enum {string}
       */
      action?: 'approve' | 'correct';
      /** @description The human decision: a string of 1–200 characters, or {decision: string 1–200, confidence?: number 0–1}. Required with action correct, refused with action approve. */
      correctedDecision?:
        | string
        | {
            decision: string;
            confidence?: number;
          };
      /** @description Why the human decided so (the correction reason). */
      feedbackNotes?: string;
      /** @description E-mail of the human who gave the verdict. */
      userEmail?: string;
    };
    PurgeResultDto: {
      /** @description Traces the filter matched. */
      matched: number;
      /** @description Traces deleted (0 for a dry run). */
      purged: number;
    };
    PurgeResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['PurgeResultDto'];
    };
    PurgeTracesDto: {
      /**
       * Format: date-time
       * @description Traces created before this instant (exclusive).
       */
      before: string;
      /** @description Only this agent’s traces. */
      agentId?: string;
      /**
       * @description Only traces with this status.
       * @enum {string}
       */
      status?: 'approved' | 'flagged' | 'blocked' | 'success';
      /**
       * @description true: count what would be purged, delete nothing.
       * @default false
       */
      dryRun?: boolean;
    };
    SubjectErasureStartedDto: {
      /** @description The erasure job; GET /subjects/{ref}/erasure shows its progress. */
      jobId: string;
      /** @enum {string} */
      status: 'running' | 'done';
    };
    SubjectErasureStartedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SubjectErasureStartedDto'];
    };
    SubjectErasureDto: {
      jobId: string;
      /**
       * @description `running` until every trace of the subject is erased.
       * @enum {string}
       */
      status: 'running' | 'done';
      /** @description Traces whose content this job erased so far. */
      tracesErased: number;
      /** @description A legal hold was placed while the job ran: it stopped there (status `done`); what it had erased stays erased. */
      stoppedByHold: boolean;
      /** Format: date-time */
      startedAt: string;
      /** Format: date-time */
      finishedAt: string | null;
    };
    SubjectErasureResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SubjectErasureDto'];
    };
    SubjectHoldDto: {
      /** @description Whether the subject is on legal hold (false once lifted). */
      held: boolean;
      /**
       * Format: date-time
       * @description When the hold was placed; null once lifted.
       */
      since: string | null;
    };
    SubjectHoldResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SubjectHoldDto'];
    };
    RecipientConfirmedDto: {
      /** @description The integration the address now receives notifications of. */
      integrationId: string;
      email: string;
      /** @enum {boolean} */
      confirmed: true;
    };
    RecipientConfirmedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['RecipientConfirmedDto'];
    };
    ConfirmRecipientDto: {
      /** @description The token of the confirmation link (`APP_URL/integrations/confirm?token=…`). */
      token: string;
    };
    IntegrationConfigDto: {
      /** @description email: every recipient, confirmed or not, in order. */
      recipients?: string[];
      /** @description email: the recipients that have not confirmed yet and receive nothing (addresses only). An address that belongs to an active member of the organization receives anyway. */
      pending?: string[];
      /**
       * @description slack, webhook: the URL’s scheme and host; the URL itself is never shown.
       * @example https://hooks.slack.com
       */
      urlHost?: string;
    };
    IntegrationDto: {
      id: string;
      /** @enum {string} */
      type: 'email' | 'slack' | 'webhook';
      name: string;
      config: components['schemas']['IntegrationConfigDto'];
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    IntegrationPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IntegrationDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    CreatedIntegrationDto: {
      id: string;
      /** @enum {string} */
      type: 'email' | 'slack' | 'webhook';
      name: string;
      config: components['schemas']['IntegrationConfigDto'];
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      /** @description webhook only: the `whsec_` signing secret (Standard Webhooks), shown this once. */
      secret?: string;
    };
    CreatedIntegrationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CreatedIntegrationDto'];
    };
    CreateIntegrationDto: {
      /** @enum {string} */
      type: 'email' | 'slack' | 'webhook';
      /** @description Trimmed. */
      name: string;
      /**
       * @description email: `{recipients: [1 to 20 addresses]}`: active members of the organization are confirmed at once; any other address gets one message with a confirmation link (valid 7 days, single use) and nothing else until it confirms (`POST /integrations/confirm`); an address already confirmed stays so; 429 RATE_LIMITED past 50 confirmation mails per organization per hour. slack and webhook: `{url}` (absolute http(s), refused when it resolves to a private address: 400 WEBHOOK_URL_NOT_ALLOWED). The URL is write-only.
       * @example {
       *       "url": "https://hooks.slack.com/services/T000/B000/XXXX"
       *     }
       */
      config:
        | {
            recipients: string[];
          }
        | {
            /** Format: uri */
            url: string;
          };
    };
    IntegrationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IntegrationDto'];
    };
    UpdateIntegrationDto: {
      name?: string;
      /** @description Replaces it. email: `{recipients: [1 to 20 addresses]}`: active members of the organization are confirmed at once; any other address gets one message with a confirmation link (valid 7 days, single use) and nothing else until it confirms (`POST /integrations/confirm`); an address already confirmed stays so; 429 RATE_LIMITED past 50 confirmation mails per organization per hour. slack and webhook: `{url}` (absolute http(s), refused when it resolves to a private address: 400 WEBHOOK_URL_NOT_ALLOWED). The URL is write-only. */
      config?:
        | {
            recipients: string[];
          }
        | {
            /** Format: uri */
            url: string;
          };
    };
    IntegrationDeletedDto: {
      id: string;
      /** @enum {boolean} */
      deleted: true;
    };
    IntegrationDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IntegrationDeletedDto'];
    };
    IntegrationTestResultDto: {
      /** @description Whether the channel accepted the test message. */
      delivered: boolean;
      /** @description slack, webhook: the receiver’s HTTP status. */
      status?: number;
      /** @description email: the messages the mail server accepted, one per confirmed recipient (pending ones get nothing). */
      sent?: number;
      /** @description Why it was not delivered. */
      error?: string;
    };
    IntegrationTestResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IntegrationTestResultDto'];
    };
    FriaRiskResponseDto: {
      title: string;
      description?: string;
      /** @enum {string} */
      likelihood: 'low' | 'medium' | 'high';
      /** @enum {string} */
      severity: 'low' | 'medium' | 'high';
      affectedRights: string[];
      mitigation?: string;
      /** @enum {string} */
      residualRisk: 'low' | 'medium' | 'high';
    };
    FriaDto: {
      id: string;
      organizationId: string;
      systemName: string;
      deployerProfileId: string | null;
      purpose: string | null;
      affectedPersons: string | null;
      usageContext: string | null;
      durationOfUse: string | null;
      identifiedRisks: components['schemas']['FriaRiskResponseDto'][];
      humanOversightSummary: string | null;
      complaintsMechanism: string | null;
      /** @enum {string} */
      status: 'draft' | 'review' | 'approved' | 'archived';
      /** @description SHA-256 hex of the canonical contents, anchored on entering review and on approval. */
      chainHash: string | null;
      approvedBy: string | null;
      /** Format: date-time */
      approvedAt: string | null;
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
      /** @description Share (%) of the 8 assessed fields populated. */
      completeness: number;
    };
    FriaPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['FriaDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    FriaResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['FriaDto'];
    };
    FriaRiskDto: {
      title: string;
      description?: string;
      /**
       * @default medium
       * @enum {string}
       */
      likelihood?: 'low' | 'medium' | 'high';
      /**
       * @default medium
       * @enum {string}
       */
      severity?: 'low' | 'medium' | 'high';
      /** @description Each at most 200 characters. */
      affectedRights?: string[];
      mitigation?: string;
      /**
       * @default medium
       * @enum {string}
       */
      residualRisk?: 'low' | 'medium' | 'high';
    };
    CreateFriaDto: {
      deployerProfileId?: string | null;
      purpose?: string | null;
      affectedPersons?: string | null;
      usageContext?: string | null;
      durationOfUse?: string | null;
      identifiedRisks?: components['schemas']['FriaRiskDto'][];
      humanOversightSummary?: string | null;
      complaintsMechanism?: string | null;
      /** @description Wizard field: collapsed with `mitigations` into one risk row titled "Identified risks". */
      risksIdentified?: string;
      /** @description Wizard field: see `risksIdentified`. */
      mitigations?: string;
      /** @description Trimmed. */
      systemName: string;
    };
    FriaVerificationDto: {
      id: string;
      /** @enum {string} */
      status: 'draft' | 'review' | 'approved' | 'archived';
      /** @description The stored chainHash (null if never anchored). */
      anchoredHash: string | null;
      /** @description SHA-256 hex of the canonical stored contents, computed now. */
      computedHash: string;
      /** @description Whether they are equal; null when nothing was ever anchored. */
      matches: boolean | null;
    };
    FriaVerificationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['FriaVerificationDto'];
    };
    FriaHistoryActorDto: {
      /** @enum {string} */
      type: 'user' | 'api_key' | 'agent' | 'scim' | 'system';
      id: string | null;
      email: string | null;
    };
    FriaHistoryEntryDto: {
      id: string;
      /** @description Position in the organization’s audit chain. */
      sequence: number;
      /** @description fria.create, fria.update, fria.transition or fria.delete. */
      eventType: string;
      actor: components['schemas']['FriaHistoryActorDto'];
      metadata: {
        [key: string]: unknown;
      };
      /** Format: date-time */
      createdAt: string;
      /** @description The entry’s hash in the audit chain. */
      hash: string;
    };
    FriaHistoryEntryPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['FriaHistoryEntryDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    UpdateFriaDto: {
      deployerProfileId?: string | null;
      purpose?: string | null;
      affectedPersons?: string | null;
      usageContext?: string | null;
      durationOfUse?: string | null;
      identifiedRisks?: components['schemas']['FriaRiskDto'][];
      humanOversightSummary?: string | null;
      complaintsMechanism?: string | null;
      /** @description Wizard field: collapsed with `mitigations` into one risk row titled "Identified risks". */
      risksIdentified?: string;
      /** @description Wizard field: see `risksIdentified`. */
      mitigations?: string;
      /** @description Trimmed. */
      systemName?: string;
    };
    TransitionFriaDto: {
      /** @enum {string} */
      status: 'draft' | 'review' | 'approved' | 'archived';
    };
    FriaDeletedDto: {
      id: string;
      /** @enum {boolean} */
      deleted: true;
    };
    FriaDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['FriaDeletedDto'];
    };
    CatalogueClauseDto: {
      clauseId: string;
      /** @description A short paraphrase, not the standard’s text. */
      title: string;
      /** @description What evidence usually shows the clause is met. */
      guidance: string;
      /** @enum {string} */
      defaultStatus: 'gap';
    };
    CatalogueDto: {
      /** @enum {string} */
      framework: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      totalClauses: number;
      clauses: components['schemas']['CatalogueClauseDto'][];
    };
    CatalogueResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CatalogueDto'];
    };
    CrosswalkClauseDto: {
      clauseId: string;
      title: string;
      /**
       * @description The organization’s status; `gap` without a note.
       * @enum {string}
       */
      status: 'covered' | 'partial' | 'gap' | 'not-applicable';
      /** @description Whether the organization has written a note for the clause. */
      noted: boolean;
    };
    CrosswalkFrameworkDto: {
      /** @enum {string} */
      framework: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      clauses: components['schemas']['CrosswalkClauseDto'][];
    };
    CrosswalkThemeDto: {
      /** @example impact-assessment */
      themeId: string;
      title: string;
      /** @description iso-42001, eu-ai-act, nist-rmf, in that order. */
      frameworks: components['schemas']['CrosswalkFrameworkDto'][];
    };
    CrosswalkDto: {
      themes: components['schemas']['CrosswalkThemeDto'][];
    };
    CrosswalkResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['CrosswalkDto'];
    };
    EvidenceRefDto: {
      /** @enum {string} */
      type: 'fria' | 'policy' | 'audit' | 'incident';
      /** @description Id of a record of the caller’s organization. */
      id: string;
    };
    MappingNoteDto: {
      clauseId: string;
      /** @enum {string} */
      status: 'covered' | 'partial' | 'gap' | 'not-applicable';
      evidence: string | null;
      evidenceRefs: components['schemas']['EvidenceRefDto'][];
      /** Format: date-time */
      reviewedAt: string | null;
      /** @description User id of the last reviewer. */
      reviewedBy: string | null;
      /** @description The reviewer’s e-mail when they wrote: a copy that survives the user’s change or deletion. */
      reviewedByEmail: string | null;
    };
    CoverageDto: {
      covered: number;
      partial: number;
      /** @description Including clauses without a note. */
      gap: number;
      notApplicable: number;
      /** @description Clauses in the catalogue. */
      total: number;
      /** @description (covered + partial / 2) / (total − notApplicable) × 100, one decimal; 0 when nothing applies. */
      percent: number;
    };
    MappingDto: {
      /** @enum {string} */
      framework: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      totalClauses: number;
      /** @description Clauses with a note, in catalogue order. */
      notes: components['schemas']['MappingNoteDto'][];
      coverage: components['schemas']['CoverageDto'];
    };
    MappingResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MappingDto'];
    };
    MappingUpdateDto: {
      note: components['schemas']['MappingNoteDto'];
      coverage: components['schemas']['CoverageDto'];
    };
    MappingUpdateResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['MappingUpdateDto'];
    };
    UpdateMappingDto: {
      /** @enum {string} */
      framework: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      /** @description A clause id of the framework’s catalogue. */
      clauseId: string;
      /**
       * @description `gap` on the first write when omitted; unchanged when omitted later.
       * @enum {string}
       */
      status?: 'covered' | 'partial' | 'gap' | 'not-applicable';
      /** @description Unchanged when omitted. */
      evidence?: string;
      /** @description Replaces the list; unchanged when omitted. Each must exist in the organization. */
      evidenceRefs?: components['schemas']['EvidenceRefDto'][];
    };
    LegacyNotesDto: {
      /** @description clauseId → text: the structured notes’ evidence with the legacy strings merged over it. */
      notes: {
        [key: string]: string;
      };
    };
    LegacyNotesResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['LegacyNotesDto'];
    };
    ReplaceLegacyNotesDto: {
      /**
       * @default iso-42001
       * @enum {string}
       */
      framework?: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      /**
       * @description clauseId → text. Keys must be clause ids of the framework; replaces its whole legacy map.
       * @example {
       *       "6.1.4": "Impact assessment done for the credit model."
       *     }
       */
      notes: {
        [key: string]: string;
      };
    };
    IncidentDto: {
      id: string;
      title: string;
      description: string | null;
      /** @enum {string} */
      category: 'death' | 'widespread_infringement' | 'critical_infrastructure' | 'other';
      agentId: string | null;
      traceId: string | null;
      /** Format: date-time */
      awareAt: string;
      /**
       * Format: date-time
       * @description awareAt plus the category’s reporting days.
       */
      deadline: string;
      /** @enum {string} */
      status: 'open' | 'reported' | 'closed';
      /** Format: date-time */
      reportedAt: string | null;
      /** Format: date-time */
      closedAt: string | null;
      /** @description While open: whole seconds to the deadline, 0 once past. null once reported or closed. */
      timeLeftSeconds: number | null;
      /** @description Open and past its deadline. */
      overdue: boolean;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    IncidentPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IncidentDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    IncidentResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['IncidentDto'];
    };
    CreateIncidentDto: {
      /** @description Trimmed. */
      title: string;
      description?: string;
      /**
       * @description Sets the deadline: death 10 days, widespread_infringement and critical_infrastructure 2, other 15.
       * @enum {string}
       */
      category: 'death' | 'widespread_infringement' | 'critical_infrastructure' | 'other';
      /** @description An agent of the organization. */
      agentId?: string;
      /** @description A trace of the organization. */
      traceId?: string;
      /**
       * Format: date-time
       * @description When the organization became aware of the incident; not in the future.
       */
      awareAt: string;
    };
    UpdateIncidentDto: {
      /**
       * @description open → reported or closed; reported → closed. The current status again changes nothing.
       * @enum {string}
       */
      status: 'open' | 'reported' | 'closed';
      /**
       * Format: date-time
       * @description With status reported only: when it was reported (default now); not before awareAt or in the future.
       */
      reportedAt?: string;
    };
    ScheduledReportDto: {
      id: string;
      organizationId: string;
      /** @description null: organization-wide. */
      workspaceId: string | null;
      name: string;
      /** @enum {string} */
      frequency: 'daily' | 'weekly' | 'monthly';
      recipients: string[];
      includeMetrics: boolean;
      includeTopAgents: boolean;
      includeAlerts: boolean;
      includeLowConf: boolean;
      isActive: boolean;
      /**
       * Format: date-time
       * @description Last successful send.
       */
      lastSentAt: string | null;
      /** Format: date-time */
      nextSendAt: string;
      /** @description Successful sends. */
      sentCount: number;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** @description The creator’s e-mail when the report was made. */
      createdByEmail: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    ScheduledReportPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScheduledReportDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    ScheduledReportResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScheduledReportDto'];
    };
    CreateScheduledReportDto: {
      /** @description Trimmed. */
      name: string;
      /** @enum {string} */
      frequency: 'daily' | 'weekly' | 'monthly';
      /**
       * @description E-mail addresses, lower-cased and de-duplicated; 1 to 20 after de-duplication.
       * @example [
       *       "compliance@example.com"
       *     ]
       */
      recipients: string[];
      /**
       * @description Volume by status, average confidence, review backlog.
       * @default true
       */
      includeMetrics?: boolean;
      /**
       * @description The 5 agents with most traces, with flag and block rates.
       * @default true
       */
      includeTopAgents?: boolean;
      /**
       * @description Blocked traces, open and overdue incidents, audit chain validity.
       * @default true
       */
      includeAlerts?: boolean;
      /**
       * @description Up to 10 traces below 0.5 confidence, with links to the dashboard.
       * @default false
       */
      includeLowConf?: boolean;
      /**
       * @description Inactive reports are never sent.
       * @default true
       */
      isActive?: boolean;
    };
    UpdateScheduledReportDto: {
      name?: string;
      /**
       * @description Changes the step of later sends.
       * @enum {string}
       */
      frequency?: 'daily' | 'weekly' | 'monthly';
      recipients?: string[];
      includeMetrics?: boolean;
      includeTopAgents?: boolean;
      includeAlerts?: boolean;
      includeLowConf?: boolean;
      /** @description false pauses the report; true resumes it. */
      isActive?: boolean;
      /**
       * Format: date-time
       * @description When the next send is due; a past instant sends on the next scheduler tick.
       */
      nextSendAt?: string;
    };
    ScheduledReportDeletedDto: {
      id: string;
      /** @enum {boolean} */
      deleted: true;
    };
    ScheduledReportDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['ScheduledReportDeletedDto'];
    };
    SendNowResultDto: {
      sentCount: number;
      /** Format: date-time */
      lastSentAt: string;
      /**
       * Format: date-time
       * @description Unchanged by send-now.
       */
      nextSendAt: string;
    };
    SendNowResultResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['SendNowResultDto'];
    };
    AlertDto: {
      id: string;
      name: string;
      /** @enum {string} */
      metric:
        | 'block_rate'
        | 'flag_rate'
        | 'low_confidence_rate'
        | 'trace_volume'
        | 'review_backlog'
        | 'overdue_incidents';
      agentId: string | null;
      /** @enum {string} */
      comparison: 'gt' | 'lt';
      threshold: number;
      windowMinutes: number;
      integrationIds: string[];
      isActive: boolean;
      /** @enum {string} */
      state: 'ok' | 'firing';
      /** Format: date-time */
      lastTriggeredAt: string | null;
      /** Format: date-time */
      lastEvaluatedAt: string | null;
      /** @description The value at the last evaluation; null before the first, or for a rate over a window without traces. */
      lastValue: number | null;
      /** @description User id of the creator. */
      createdBy: string | null;
      /** Format: date-time */
      createdAt: string;
      /** Format: date-time */
      updatedAt: string;
    };
    AlertPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AlertDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    AlertResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AlertDto'];
    };
    CreateAlertDto: {
      /** @description Trimmed. */
      name: string;
      /**
       * @description `block_rate`, `flag_rate`, `low_confidence_rate` (confidence below 0.5): shares of the traces created in the window, from 0 to 1 (no trace in the window: not measured, the state stays); `trace_volume`: traces created in the window; `review_backlog`: review items awaiting a decision now; `overdue_incidents`: open incidents past their deadline now.
       * @enum {string}
       */
      metric:
        | 'block_rate'
        | 'flag_rate'
        | 'low_confidence_rate'
        | 'trace_volume'
        | 'review_backlog'
        | 'overdue_incidents';
      /** @description Only this agent’s traces, review items or incidents; absent: all. */
      agentId?: string;
      /**
       * @description Fires while the value is greater (gt) or less (lt).
       * @enum {string}
       */
      comparison: 'gt' | 'lt';
      /** @description A rate metric: 0 to 1. A count metric: 0 to 1,000,000,000. */
      threshold: number;
      /** @description The window, in minutes. */
      windowMinutes: number;
      /** @description Integrations of the organization notified on each transition, at most 10. */
      integrationIds?: string[];
      /** @default true */
      isActive?: boolean;
    };
    AlertTransitionDto: {
      id: string;
      alertId: string;
      /** @description The rule’s name at the time. */
      alertName: string;
      /** @enum {string} */
      from: 'ok' | 'firing';
      /** @enum {string} */
      to: 'ok' | 'firing';
      /** @enum {string} */
      metric:
        | 'block_rate'
        | 'flag_rate'
        | 'low_confidence_rate'
        | 'trace_volume'
        | 'review_backlog'
        | 'overdue_incidents';
      agentId: string | null;
      /** @enum {string} */
      comparison: 'gt' | 'lt';
      threshold: number;
      windowMinutes: number;
      /** @description The value measured. */
      value: number;
      /** @description Integrations notified. */
      notified: number;
      /** Format: date-time */
      at: string;
    };
    AlertTransitionPage: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AlertTransitionDto'][];
      pagination: components['schemas']['PaginationDto'];
    };
    UpdateAlertDto: {
      name?: string;
      /** @enum {string} */
      metric?:
        | 'block_rate'
        | 'flag_rate'
        | 'low_confidence_rate'
        | 'trace_volume'
        | 'review_backlog'
        | 'overdue_incidents';
      /** @description null: every agent. */
      agentId?: string | null;
      /** @enum {string} */
      comparison?: 'gt' | 'lt';
      /** @description A rate metric: 0 to 1. A count metric: 0 to 1,000,000,000. */
      threshold?: number;
      windowMinutes?: number;
      /** @description Replaces them. Integrations of the organization notified on each transition, at most 10. */
      integrationIds?: string[];
      /** @description false: not evaluated, and its state goes back to ok without a notification. */
      isActive?: boolean;
    };
    AlertDeletedDto: {
      id: string;
      /** @enum {boolean} */
      deleted: true;
    };
    AlertDeletedResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AlertDeletedDto'];
    };
    ExplanationAgentDto: {
      id: string;
      /** @description null once the agent was deleted. */
      name: string | null;
      /** @description The agent’s stated purpose, as its description records it; null when none was given. */
      description: string | null;
    };
    ExplanationDecisionDto: {
      /**
       * @description The trace’s status now (`success`: settled by human feedback after the decision).
       * @enum {string}
       */
      status: 'approved' | 'flagged' | 'blocked' | 'success';
      /** @description The agent’s confidence in its decision, 0 to 1. */
      confidence: number;
      /**
       * Format: date-time
       * @description When the decision was recorded.
       */
      madeAt: string;
    };
    ExplanationPolicyDto: {
      policyId: string;
      /** @description The policy’s name when it matched. */
      name: string;
      /** @enum {string} */
      outcome: 'block' | 'flag';
      /** @description The policy’s conditions in plain English ("The output contained an e-mail address."), from its stored conditions; it says so when the policy was edited after the decision, or deleted. */
      explanation: string;
    };
    ExplanationHumanReviewDto: {
      /** @enum {string} */
      decision: 'approved' | 'rejected' | 'escalated';
      /** Format: date-time */
      decidedAt: string;
      /**
       * @description The reviewer’s role in the organization (never who they are); null when the item was closed by feedback, or the reviewer is no longer a member.
       * @enum {string|null}
       */
      reviewerRole: 'owner' | 'admin' | 'member' | 'viewer' | null;
      /** @description The reviewer’s notes or reason. */
      notes: string | null;
      /**
       * @description `review`: decided in the review queue; `feedback`: closed by human feedback (POST /cpi/ingest).
       * @enum {string}
       */
      via: 'review' | 'feedback';
    };
    ExplanationCorrectionDto: {
      /**
       * @description `correct`: a person replaced the decision; `approve`: a person confirmed it.
       * @enum {string}
       */
      action: 'approve' | 'correct';
      /**
       * Format: date-time
       * @description When this feedback was (last) given.
       */
      at: string;
      /** @description The agent’s own decision. */
      originalDecision: string | null;
      /** @description The decision the person set (`correct`). */
      correctedDecision: string | null;
      originalConfidence: number;
      correctedConfidence: number | null;
      /** @description The reason given with the feedback. */
      notes: string | null;
    };
    TraceExplanationDto: {
      traceId: string;
      agent: components['schemas']['ExplanationAgentDto'];
      decision: components['schemas']['ExplanationDecisionDto'];
      /** @description The policies that matched, in priority order. */
      policies: components['schemas']['ExplanationPolicyDto'][];
      /** @description The human decision on its review item; null when none was made (not flagged, or still pending). */
      humanReview: components['schemas']['ExplanationHumanReviewDto'] | null;
      /** @description The approval pattern that approved the flagged decision automatically, if one did. */
      autoApprovedBy: string | null;
      /** @description Human feedback given after the decision (POST /cpi/ingest): its latest verdict, or nothing. */
      corrections: components['schemas']['ExplanationCorrectionDto'][];
      /** @description Whom to contest the decision with: the organization’s `contestContact`; null when not set. */
      contact: string | null;
      /**
       * Format: date-time
       * @description When the decision’s content was erased; the explanation is then made from what remains.
       */
      erasedAt: string | null;
    };
    TraceExplanationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['TraceExplanationDto'];
    };
    /** @description An RFC 7643 User: a member of the token’s organization. With `attributes` or `excludedAttributes` (RFC 7644 §3.9) only the attributes asked for are present; `id` and `schemas` always are. */
    ScimUser: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:User`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:User"
       *     ]
       */
      schemas: string[];
      /** @description The user id. */
      id: string;
      /** @description The identity provider’s id, when it set one. */
      externalId?: string;
      /** @description The e-mail address the user signs in with (lower case). */
      userName?: string;
      name?: {
        givenName?: string;
        familyName?: string;
        readonly formatted?: string;
      };
      displayName?: string;
      /** @description false: deprovisioned in this organization. */
      active?: boolean;
      /** @description As the identity provider wrote them; else the userName as the work address. */
      emails?: {
        value: string;
        /**
         * @description work, home or other.
         * @example work
         */
        type?: string;
        primary?: boolean;
        display?: string;
      }[];
      /** @description The role bucket of the user (change it through the Group). */
      readonly groups?: {
        value: string;
        display: string;
        /** Format: uri */
        $ref: string;
      }[];
      readonly meta?: {
        resourceType?: string;
        /** Format: uri */
        location?: string;
        /** Format: date-time */
        created?: string;
        /** Format: date-time */
        lastModified?: string;
        /** @description A weak version tag (`W/"…"`). */
        version?: string;
      };
    };
    /** @description An RFC 7643 User to provision (POST) or replace (PUT). `userName` (an e-mail address) is required, or else an address in `emails`. POST reads the role from `groups[].display|value` and `roles[].value` through the organization’s role-mapping rules. `id`, `meta`, extension schemas and RFC 7643 attributes the service does not keep are accepted and ignored. */
    ScimUserRequest: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:User`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:User"
       *     ]
       */
      schemas?: string[];
      userName?: string;
      externalId?: string;
      name?: {
        givenName?: string;
        familyName?: string;
      };
      displayName?: string;
      /** @description A boolean, or the strings "True"/"False". */
      active?: boolean | ('True' | 'False' | 'true' | 'false');
      emails?: {
        value: string;
        /**
         * @description work, home or other.
         * @example work
         */
        type?: string;
        primary?: boolean;
        display?: string;
      }[];
      /** @description POST only: the identity provider’s groups, mapped to a role. */
      groups?: {
        value?: string;
        display?: string;
      }[];
      /** @description POST only: the identity provider’s roles, mapped to a role. */
      roles?: {
        value?: string;
      }[];
    };
    /** @description An RFC 7644 §3.5.2 PatchOp: all operations apply, or none. `op` in any case; a value may be bare, an object or a one-element array. */
    ScimPatchOp: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:PatchOp`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:PatchOp"
       *     ]
       */
      schemas?: string[];
      Operations: {
        /**
         * @description `add`, `replace` or `remove`, in any case.
         * @example replace
         */
        op: string;
        /**
         * @description An attribute path; `remove` needs one.
         * @example active
         */
        path?: string;
        /** @description The new value (not with `remove`): any JSON the path takes, or a partial resource without a path. */
        value?: unknown;
      }[];
    };
    /** @description A role bucket (owner, admin, member, reviewer) with its members. With `attributes` or `excludedAttributes` (RFC 7644 §3.9) only the attributes asked for are present; `id` and `schemas` always are. */
    ScimGroup: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:Group`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:Group"
       *     ]
       */
      schemas: string[];
      /** @enum {string} */
      id: 'owner' | 'admin' | 'member' | 'reviewer';
      /** @enum {string} */
      displayName?: 'owner' | 'admin' | 'member' | 'reviewer';
      /** @description At most 1,000. */
      members?: {
        /** @description The user id. */
        value: string;
        /** @description The user’s e-mail address. */
        display: string;
        /** @enum {string} */
        type: 'User';
        /** Format: uri */
        $ref: string;
      }[];
      readonly meta?: {
        resourceType?: string;
        /** Format: uri */
        location?: string;
      };
    };
    /** @description An RFC 7644 §3.4.2 ListResponse of ScimUser resources. */
    ScimUserListResponse: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:ListResponse`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:ListResponse"
       *     ]
       */
      schemas: string[];
      totalResults: number;
      startIndex: number;
      itemsPerPage: number;
      Resources: components['schemas']['ScimUser'][];
    };
    /** @description An RFC 7644 §3.4.2 ListResponse of ScimGroup resources. */
    ScimGroupListResponse: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:ListResponse`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:ListResponse"
       *     ]
       */
      schemas: string[];
      totalResults: number;
      startIndex: number;
      itemsPerPage: number;
      Resources: components['schemas']['ScimGroup'][];
    };
    /** @description RFC 7643 §5: what this service provider supports. */
    ScimServiceProviderConfig: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
       *     ]
       */
      schemas: string[];
      /** Format: uri */
      documentationUri?: string;
      patch: {
        supported: boolean;
      };
      bulk: {
        supported: boolean;
        maxOperations: number;
        maxPayloadSize: number;
      };
      filter: {
        supported: boolean;
        maxResults: number;
      };
      changePassword: {
        supported: boolean;
      };
      sort: {
        supported: boolean;
      };
      etag: {
        supported: boolean;
      };
      authenticationSchemes: {
        type: string;
        name: string;
        description: string;
        primary?: boolean;
      }[];
      meta?: {
        resourceType?: string;
        /** Format: uri */
        location?: string;
      };
    };
    /** @description RFC 7643 §6: a resource type (User or Group). */
    ScimResourceType: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:ResourceType`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
       *     ]
       */
      schemas: string[];
      /** @enum {string} */
      id: 'User' | 'Group';
      name: string;
      /** @example /Users */
      endpoint: string;
      description?: string;
      /** @description The URN of its schema. */
      schema: string;
      schemaExtensions?: {
        schema?: string;
        required?: boolean;
      }[];
      meta?: {
        resourceType?: string;
        /** Format: uri */
        location?: string;
      };
    };
    /** @description An RFC 7644 §3.4.2 ListResponse of ScimResourceType resources. */
    ScimResourceTypeListResponse: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:ListResponse`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:ListResponse"
       *     ]
       */
      schemas: string[];
      totalResults: number;
      startIndex: number;
      itemsPerPage: number;
      Resources: components['schemas']['ScimResourceType'][];
    };
    /** @description RFC 7643 §7: an attribute definition, with the RFC’s defaults written out. */
    ScimSchemaAttribute: {
      name: string;
      /** @enum {string} */
      type: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
      multiValued: boolean;
      description: string;
      required: boolean;
      caseExact?: boolean;
      /** @enum {string} */
      mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
      /** @enum {string} */
      returned: 'always' | 'never' | 'default' | 'request';
      /** @enum {string} */
      uniqueness?: 'none' | 'server' | 'global';
      subAttributes?: components['schemas']['ScimSchemaAttribute'][];
      referenceTypes?: string[];
      canonicalValues?: string[];
    };
    /** @description RFC 7643 §7: the schema of User or Group, with the attributes this service keeps. */
    ScimSchema: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:schemas:core:2.0:Schema`).
       * @example [
       *       "urn:ietf:params:scim:schemas:core:2.0:Schema"
       *     ]
       */
      schemas: string[];
      /** @enum {string} */
      id: 'urn:ietf:params:scim:schemas:core:2.0:User' | 'urn:ietf:params:scim:schemas:core:2.0:Group';
      name: string;
      description?: string;
      attributes: components['schemas']['ScimSchemaAttribute'][];
      meta?: {
        resourceType?: string;
        /** Format: uri */
        location?: string;
      };
    };
    /** @description An RFC 7644 §3.4.2 ListResponse of ScimSchema resources. */
    ScimSchemaListResponse: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:ListResponse`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:ListResponse"
       *     ]
       */
      schemas: string[];
      totalResults: number;
      startIndex: number;
      itemsPerPage: number;
      Resources: components['schemas']['ScimSchema'][];
    };
    /** @description An RFC 7644 §3.12 error; `status` is the HTTP status as a string. */
    ScimError: {
      /**
       * @description The schema URNs of the resource (`urn:ietf:params:scim:api:messages:2.0:Error`).
       * @example [
       *       "urn:ietf:params:scim:api:messages:2.0:Error"
       *     ]
       */
      schemas: string[];
      /** @example 400 */
      status: string;
      /** @enum {string} */
      scimType?:
        'invalidValue' | 'invalidFilter' | 'uniqueness' | 'invalidSyntax' | 'mutability' | 'noTarget';
      detail: string;
    };
    LoginResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['LoginResultDto'] | components['schemas']['MfaChallengeDto'];
    };
    PreferencesResponse: {
      /** @enum {boolean} */
      success: true;
      /**
       * @example {
       *       "notifications": {
       *         "weeklyDigest": false
       *       },
       *       "theme": "dark"
       *     }
       */
      data: {
        [key: string]: unknown;
      };
    };
    AcceptInvitationResponse: {
      /** @enum {boolean} */
      success: true;
      data: components['schemas']['AcceptedInvitationDto'] | components['schemas']['MfaChallengeDto'];
    };
    IngestTraceForbiddenResponse:
      components['schemas']['BlockedEnvelopeDto'] | components['schemas']['ErrorEnvelopeDto'];
    /** @description ExportTraceServiceResponse; `{}` when every span was accepted. */
    OtlpExportTraceServiceResponse: {
      partialSuccess?: {
        /** @description GenAI spans that could not form a valid trace. */
        rejectedSpans?: number;
        /** @description Reason per rejected span (first five). */
        errorMessage?: string;
      };
    };
    /** @description google.rpc.Status (protobuf-encoded for application/x-protobuf requests). */
    OtlpStatus: {
      /** @example 3 */
      code?: number;
      message?: string;
    };
    /** @description One of its members: stringValue, boolValue, intValue (a decimal string or a number), doubleValue, arrayValue, kvlistValue or bytesValue (base64). */
    OtlpAnyValue: {
      stringValue?: string;
      boolValue?: boolean;
      intValue?: string | number;
      doubleValue?: number;
      arrayValue?: {
        values?: components['schemas']['OtlpAnyValue'][];
      };
      kvlistValue?: {
        values?: components['schemas']['OtlpKeyValue'][];
      };
      bytesValue?: string;
    };
    OtlpKeyValue: {
      /** @example gen_ai.operation.name */
      key: string;
      value: components['schemas']['OtlpAnyValue'];
    };
    /** @description A span (opentelemetry-proto `trace.proto`). Only generative-AI spans (gen_ai.operation.name, gen_ai.provider.name or gen_ai.system) become traces: the prompt and output come from gen_ai.input.messages and gen_ai.output.messages (or the deprecated gen_ai.prompt, gen_ai.completion and their events). */
    OtlpSpan: {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      traceState?: string;
      /** @example chat gpt-4o */
      name: string;
      /** @description SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer (or its name). */
      kind?: number | string;
      startTimeUnixNano: string | number;
      endTimeUnixNano: string | number;
      attributes?: components['schemas']['OtlpKeyValue'][];
      events?: {
        /** @example gen_ai.user.message */
        name: string;
        timeUnixNano?: string | number;
        attributes?: components['schemas']['OtlpKeyValue'][];
      }[];
      status?: {
        /** @description StatusCode: 0 unset, 1 ok, 2 error (or its name). */
        code?: number | string;
        message?: string;
      };
    };
    /** @description OTLP/JSON ExportTraceServiceRequest (opentelemetry-proto `collector/trace/v1`); lowerCamelCase member names, or the proto’s snake_case ones. As application/x-protobuf, the same message in the protobuf encoding. */
    OtlpExportTraceServiceRequest: {
      resourceSpans?: {
        resource?: {
          attributes?: components['schemas']['OtlpKeyValue'][];
        };
        scopeSpans?: {
          scope?: {
            name?: string;
            version?: string;
          };
          spans?: components['schemas']['OtlpSpan'][];
        }[];
      }[];
    };
    /**
     * @description Stable machine-readable code of an error: the platform’s codes and every module’s.
     * @enum {string}
     */
    ErrorCode:
      | 'ACCOUNT_DEACTIVATED'
      | 'ALREADY_DECIDED'
      | 'ALREADY_ESCALATED'
      | 'AUDIT_CHAIN_INVALID'
      | 'CONFLICT'
      | 'DOMAIN_NOT_VERIFIED'
      | 'EMAIL_IN_USE'
      | 'FORBIDDEN'
      | 'FRIA_CREATE_FAILED'
      | 'FRIA_DELETE_FAILED'
      | 'FRIA_GET_FAILED'
      | 'FRIA_LIST_FAILED'
      | 'FRIA_TRANSITION_FAILED'
      | 'FRIA_UPDATE_FAILED'
      | 'GONE'
      | 'HEADERS_TOO_LARGE'
      | 'INTERNAL_ERROR'
      | 'INVALID_CREDENTIALS'
      | 'INVALID_MFA_CODE'
      | 'INVALID_TOKEN'
      | 'INVITE_ALREADY_USED'
      | 'INVITE_EXPIRED'
      | 'METHOD_NOT_ALLOWED'
      | 'NOT_FOUND'
      | 'ORGANIZATION_DELETED'
      | 'PATTERN_STATE_CONFLICT'
      | 'PAYLOAD_TOO_LARGE'
      | 'RATE_LIMITED'
      | 'RATE_LIMIT_EXCEEDED'
      | 'REAUTHENTICATION_REQUIRED'
      | 'REQUEST_TIMEOUT'
      | 'SAML_MESSAGE_INVALID'
      | 'SEND_FAILED'
      | 'SERVICE_UNAVAILABLE'
      | 'SESSION_REVOKED'
      | 'SSO_DOMAIN_TAKEN'
      | 'SSO_REQUIRED'
      | 'SUBJECT_ON_HOLD'
      | 'SVC_BLOCKED_BY_POLICY'
      | 'SVC_DUPLICATE_REQUEST'
      | 'TOKEN_EXPIRED'
      | 'TRACE_ERASED'
      | 'UNAUTHORIZED'
      | 'UNSUPPORTED_MEDIA_TYPE'
      | 'UPGRADE_REQUIRED'
      | 'URI_TOO_LONG'
      | 'VALIDATION_ERROR'
      | 'VERSION_SUNSET'
      | 'VERSION_UNSUPPORTED'
      | 'WEBHOOK_DISABLED'
      | 'WEBHOOK_URL_NOT_ALLOWED';
    /** @description The outcome of ingesting a trace, not its contents (read those with GET /traces/{id}). */
    TraceEventData: {
      traceId: string;
      /** @description The trace’s agent. */
      agentId: string | null;
      /**
       * @description The outcome.
       * @enum {string}
       */
      status: 'approved' | 'flagged' | 'blocked';
      confidence: number | null;
      /** @description The policies that matched. */
      policyIds: string[];
      /** @description The pending review item of a flagged trace. */
      reviewItemId: string | null;
      /** @description trace.approved only: the approval pattern that approved a trace policies flagged (absent otherwise). */
      autoApprovedBy?: string;
      /** @description The PII types the matched policies’ containsPii conditions found: types only, never values (absent when none did). */
      piiEntities?: (
        | 'email'
        | 'phone'
        | 'creditCard'
        | 'iban'
        | 'ipAddress'
        | 'usSsn'
        | 'ukNino'
        | 'deTaxId'
        | 'frNir'
        | 'esDni'
        | 'itFiscalCode'
        | 'nlBsn'
        | 'plPesel'
      )[];
    };
    ReviewCompletedEventData: {
      reviewItemId: string;
      traceId: string;
      agentId: string;
      /** @description The reviewer’s notes. */
      notes: string | null;
      /** Format: date-time */
      decidedAt: string;
      /** @enum {string} */
      decision: 'approve' | 'reject';
      /**
       * @description The item’s status now.
       * @enum {string}
       */
      status: 'approved' | 'rejected';
      /**
       * @description The trace’s status now: approved or blocked by a reviewer, success after feedback.
       * @enum {string}
       */
      traceStatus: 'approved' | 'flagged' | 'blocked' | 'success';
      /** @description The reviewer; null when feedback closed the item. */
      decidedBy: string | null;
      /**
       * @description `review`: a reviewer decided; `feedback`: CPI feedback on the trace closed the item.
       * @enum {string}
       */
      resolution: 'review' | 'feedback';
      feedback?: components['schemas']['ReviewFeedbackClosure'];
    };
    /** @description With `resolution: feedback` only: the feedback that closed the item. */
    ReviewFeedbackClosure: {
      /** @enum {string} */
      action: 'approve' | 'correct';
      /** @description The workspace key that sent the feedback. */
      apiKeyId: string | null;
      /** @description The person the feedback names. */
      userEmail: string | null;
      /** @description The feedback’s audit entry (cpi.approved or cpi.corrected). */
      auditEntryId: string;
    };
    ReviewEscalatedEventData: {
      reviewItemId: string;
      traceId: string;
      agentId: string;
      /** @description The reviewer’s notes. */
      notes: string | null;
      /** Format: date-time */
      decidedAt: string;
      /** @enum {string} */
      decision: 'escalate';
      /** @enum {string} */
      status: 'escalated';
      /**
       * @description The trace stays flagged.
       * @enum {string}
       */
      traceStatus: 'flagged';
      /** @description Who escalated it. */
      decidedBy: string | null;
      resolution: null;
    };
    FriaApprovedEventData: {
      /** @description The assessment. */
      id: string;
      systemName: string;
      /** @description The hash of the approved contents. */
      chainHash: string | null;
      /** @description The approver. */
      approvedBy: string | null;
      /** Format: date-time */
      approvedAt: string | null;
    };
    ComplianceMappingUpdatedEventData: {
      /** @enum {string} */
      framework: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      clauseId: string;
      /** @enum {string} */
      status: 'covered' | 'partial' | 'gap' | 'not-applicable';
      coverage: components['schemas']['CoverageDto'];
    };
    CpiFeedbackEventData: {
      traceId: string;
      agentId: string;
      /** @enum {string} */
      action: 'approve' | 'correct';
      /** @description Whether a human’s decision replaced the agent’s. */
      humanOverride: boolean;
      /** @description The person the feedback names. */
      userEmail: string | null;
    };
    AlertTransitionEventData: {
      alertId: string;
      name: string;
      /** @enum {string} */
      metric:
        | 'block_rate'
        | 'flag_rate'
        | 'low_confidence_rate'
        | 'trace_volume'
        | 'review_backlog'
        | 'overdue_incidents';
      /** @description The agent the rule watches; null: every agent. */
      agentId: string | null;
      /** @enum {string} */
      comparison: 'gt' | 'lt';
      threshold: number;
      windowMinutes: number;
      /** @description The metric’s value that moved the rule. */
      value: number;
      /**
       * @description `share` for the rates (0 to 1).
       * @enum {string}
       */
      unit: 'share' | 'count';
      /**
       * @description The rule’s state now.
       * @enum {string}
       */
      state: 'firing' | 'ok';
      /** @enum {string} */
      previousState: 'firing' | 'ok';
      /** Format: date-time */
      at: string;
    };
    WebhookTestEventData: {
      webhookId: string;
      /** @example A test event from the governance service */
      message: string;
    };
    /** @description `trace.approved`: A trace was approved at ingestion (by policies, or by a signed-off approval pattern). */
    TraceApprovedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'trace.approved';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['TraceEventData'];
    };
    /** @description `trace.flagged`: A trace was flagged for human review (it has a pending review item). */
    TraceFlaggedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'trace.flagged';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['TraceEventData'];
    };
    /** @description `trace.blocked`: A trace was blocked by a policy. */
    TraceBlockedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'trace.blocked';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['TraceEventData'];
    };
    /** @description `review.completed`: A review item was approved or rejected, by a reviewer or by feedback on its trace. */
    ReviewCompletedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'review.completed';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['ReviewCompletedEventData'];
    };
    /** @description `review.escalated`: A review item was escalated to owners and admins. */
    ReviewEscalatedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'review.escalated';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['ReviewEscalatedEventData'];
    };
    /** @description `fria.approved`: A fundamental-rights impact assessment was approved. */
    FriaApprovedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'fria.approved';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['FriaApprovedEventData'];
    };
    /** @description `compliance.mapping.updated`: A clause of a compliance mapping changed. */
    ComplianceMappingUpdatedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'compliance.mapping.updated';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['ComplianceMappingUpdatedEventData'];
    };
    /** @description `cpi.approved`: Human feedback approved a trace’s decision. */
    CpiApprovedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'cpi.approved';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['CpiFeedbackEventData'];
    };
    /** @description `cpi.corrected`: Human feedback corrected a trace’s decision. */
    CpiCorrectedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'cpi.corrected';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['CpiFeedbackEventData'];
    };
    /** @description `alert.triggered`: An alert rule started firing. */
    AlertTriggeredEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'alert.triggered';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['AlertTransitionEventData'];
    };
    /** @description `alert.resolved`: A firing alert rule went back to ok. */
    AlertResolvedEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'alert.resolved';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['AlertTransitionEventData'];
    };
    /** @description `audit.checkpoint`: A signed checkpoint of the audit chain was made. */
    AuditCheckpointEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'audit.checkpoint';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['AuditCheckpointDto'];
    };
    /** @description `webhook.test`: A test delivery asked for with POST /webhooks/{id}/test (sent to that webhook only). */
    WebhookTestEvent: {
      /** @description The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it. */
      id?: string;
      /**
       * @description discriminator enum property added by openapi-typescript
       * @enum {string}
       */
      type: 'webhook.test';
      /**
       * Format: date-time
       * @description When the event happened.
       */
      timestamp: string;
      data: components['schemas']['WebhookTestEventData'];
    };
    /** @description Any event the service sends to webhooks and to the live stream (`GET /events/stream`, `/events/ws`); `type` says which. */
    GovernanceEvent:
      | components['schemas']['TraceApprovedEvent']
      | components['schemas']['TraceFlaggedEvent']
      | components['schemas']['TraceBlockedEvent']
      | components['schemas']['ReviewCompletedEvent']
      | components['schemas']['ReviewEscalatedEvent']
      | components['schemas']['FriaApprovedEvent']
      | components['schemas']['ComplianceMappingUpdatedEvent']
      | components['schemas']['CpiApprovedEvent']
      | components['schemas']['CpiCorrectedEvent']
      | components['schemas']['AlertTriggeredEvent']
      | components['schemas']['AlertResolvedEvent']
      | components['schemas']['AuditCheckpointEvent']
      | components['schemas']['WebhookTestEvent'];
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: {
    /** @description The request’s id (a well-formed incoming one is kept); quote it when reporting a problem. */
    'X-Request-Id': string;
    /** @description The schema version (YYYY-MM-DD) the answer follows: the pinned one, or the latest. */
    'X-Svc-Version': string;
    /** @description Seconds to wait before trying again. */
    'Retry-After': number;
  };
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  getHealth: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['HealthResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (database check failed) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getLiveness: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LivenessResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getReadiness: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReadinessResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (database down, migrations pending, or draining) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listSchemaVersions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SchemaVersionListResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  register: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Ada Lovelace",
         *       "email": "ada@analytical-engines.example",
         *       "password": "Correct-Horse-9",
         *       "organizationName": "Analytical Engines Ltd"
         *     }
         */
        'application/json': components['schemas']['RegisterDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegisterResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description EMAIL_IN_USE (the e-mail address is already registered) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  login: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "email": "ada@analytical-engines.example",
         *       "password": "Correct-Horse-9"
         *     }
         */
        'application/json': components['schemas']['LoginDto'];
      };
    };
    responses: {
      /** @description `{token, user}`, or `{mfaRequired: true, tempToken}` when the user has MFA enabled */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description INVALID_CREDENTIALS (wrong e-mail or password, same body either way), ACCOUNT_DEACTIVATED (no active membership), ORGANIZATION_DELETED (every active membership is in a deleted organization) */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  logout: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getMe: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MeResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  requestSignup: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Grace Hopper",
         *       "email": "grace@compilers.example",
         *       "password": "Correct-Horse-9",
         *       "organizationName": "Compilers Inc"
         *     }
         */
        'application/json': components['schemas']['RegisterDto'];
      };
    };
    responses: {
      /** @description Success */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  completeSignup: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "token": "k3YwqL0rQ9uE2tVb7sXn1mJcH4pZa8dG"
         *     }
         */
        'application/json': components['schemas']['EmailTokenDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegisterResultResponse'];
        };
      };
      /** @description INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description EMAIL_IN_USE (the address was registered meanwhile) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  forgotPassword: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "email": "ada@analytical-engines.example"
         *     }
         */
        'application/json': components['schemas']['EmailDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  resetPassword: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "token": "p9FhT2wLx6VqR1nKc8YbJ3mZs5dGa0eU",
         *       "password": "New-Secret-123"
         *     }
         */
        'application/json': components['schemas']['ResetPasswordDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  changePassword: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "currentPassword": "Correct-Horse-9",
         *       "newPassword": "New-Secret-123"
         *     }
         */
        'application/json': components['schemas']['ChangePasswordDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VALIDATION_ERROR (weak new password; `details` names currentPassword when it is wrong) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  requestMagicLink: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "email": "ada@analytical-engines.example"
         *     }
         */
        'application/json': components['schemas']['EmailDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyMagicLink: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "token": "Qm4xW8sZ2kLp7VtN1cRj5HbYf9gDa3eU"
         *     }
         */
        'application/json': components['schemas']['EmailTokenDto'];
      };
    };
    responses: {
      /** @description `{token, user}`, or `{mfaRequired: true, tempToken}` when the user has MFA enabled */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResponse'];
        };
      };
      /** @description INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description ACCOUNT_DEACTIVATED, ORGANIZATION_DELETED (as login) */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getPasskeyRegistrationOptions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyPasskeyRegistration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getPasskeyAuthenticationOptions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyPasskeyAuthentication: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deletePasskey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  forgetTrustedDevice: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        deviceId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  requestAccountUnlock: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  checkPasswordHistory: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyEmail: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  resendVerificationEmail: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getCurrentOrganization: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OrganizationResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteCurrentOrganization: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "confirmName": "Analytical Engines Ltd"
         *     }
         */
        'application/json': components['schemas']['DeleteOrganizationDto'];
      };
    };
    responses: {
      /** @description Success */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OrganizationDeletionResponse'];
        };
      };
      /** @description VALIDATION_ERROR (confirmName missing or not the organization’s name) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateCurrentOrganization: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Analytical Engines Ltd",
         *       "traceRetentionDays": 365
         *     }
         */
        'application/json': components['schemas']['UpdateOrganizationDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OrganizationResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getBillingPlan: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BillingPlanResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createBillingCheckout: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  openBillingPortal: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PlaceholderResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  setUpMfa: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MfaSetupResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT (MFA is already enabled) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  enableMfa: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "code": "492039"
         *     }
         */
        'application/json': components['schemas']['MfaCodeDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BackupCodesResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code); UNAUTHORIZED, SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT (MFA is already enabled), or no pending secret (call /auth/mfa/setup first) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  disableMfa: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "code": "a7k2-9xq4"
         *     }
         */
        'application/json': components['schemas']['MfaCodeOrBackupCodeDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MessageResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code); UNAUTHORIZED, SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT (MFA is not enabled) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  loginWithMfa: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "code": "492039",
         *       "tempToken": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI2NWYxYzBmZmVlMDAwMDAwMDAwMDEyMzQiLCJwdXJwb3NlIjoibWZhIn0.Yk2p9sQx4Lr7VtN1cRj5HbYf9gDa3eUo8wZm2kLp7Vs"
         *     }
         */
        'application/json': components['schemas']['MfaLoginDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code); UNAUTHORIZED (tempToken malformed, expired, issued before the last password change, or MFA was disabled since); ACCOUNT_DEACTIVATED (no active membership) */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (the auth limiter per IP, or 10 wrong MFA codes for this user in 15 minutes) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  generateBackupCodes: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "code": "492039"
         *     }
         */
        'application/json': components['schemas']['MfaCodeDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BackupCodesResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code); UNAUTHORIZED, SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT (MFA is not enabled) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  resendMfaCode: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MfaResendResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getSecuritySettings: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SecuritySettingsResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listApiKeys: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createApiKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "CI pipeline",
         *       "scope": {
         *         "agentIds": [
         *           "661f0c2a9b1e4c0012345678"
         *         ],
         *         "readOnly": false
         *       }
         *     }
         */
        'application/json': components['schemas']['CreateApiKeyDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedApiKeyResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeApiKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Key id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no live workspace key with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateApiKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Key id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "CI pipeline (read only)",
         *       "scope": {
         *         "readOnly": true
         *       }
         *     }
         */
        'application/json': components['schemas']['UpdateApiKeyDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no live workspace key with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createStreamToken: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['StreamTokenResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  refreshSession: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionTokenResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeAllSessions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevokedCountResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeSession: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "sessionId": "6622c4e5f6a7b80012ef9012"
         *     }
         */
        'application/json': components['schemas']['RevokeSessionDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RevokedCountResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no such session of the caller) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listSessions: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionListResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  setSessionTimeout: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "sessionTimeout": "8h"
         *     }
         */
        'application/json': components['schemas']['SessionTimeoutDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SessionTimeoutResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listMyOrganizations: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserOrganizationListResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  switchOrganization: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "organizationId": "65f1c0ffee0000000000abcd"
         *     }
         */
        'application/json': components['schemas']['SwitchOrgDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SwitchOrgResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (the presented session came through another organization’s SSO); SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; `details.ssoUrl` is where sign-in starts): into an organization that enforces SSO for the caller’s address */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (unknown organization, or no active membership of the caller in it) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateProfile: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Ada King",
         *       "locale": "en-GB",
         *       "timezone": "Europe/London"
         *     }
         */
        'application/json': components['schemas']['UpdateProfileDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getPreferences: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description `{success: true, data: <preferences object>}` */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PreferencesResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updatePreferences: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "theme": "dark",
         *       "notifications": {
         *         "weeklyDigest": false
         *       },
         *       "dashboard": {
         *         "pinnedAgents": null
         *       }
         *     }
         */
        'application/json': {
          [key: string]: unknown;
        };
      };
    };
    responses: {
      /** @description `{success: true, data: <merged preferences>}` */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PreferencesResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listLoginActivity: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginActivityPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listMembers: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TeamMemberPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  changeMemberRole: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description User id of the member (24 lower-case hex characters). */
        userId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "role": "admin"
         *     }
         */
        'application/json': components['schemas']['ChangeRoleDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TeamMemberResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, or the change would leave the organization without an active owner) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no member with this user id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  suspendMember: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description User id of the member (24 lower-case hex characters). */
        userId: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "isActive": false
         *     }
         */
        'application/json': components['schemas']['SuspendMemberDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TeamMemberResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, or the change would leave the organization without an active owner) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no member with this user id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  reactivateMember: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description User id of the member (24 lower-case hex characters). */
        userId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TeamMemberResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no member with this user id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  removeMember: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description User id of the member (24 lower-case hex characters). */
        userId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, or the change would leave the organization without an active owner) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no member with this user id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createInvitation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "email": "grace@analytical-engines.example",
         *       "role": "member"
         *     }
         */
        'application/json': components['schemas']['CreateInvitationDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['InvitationResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body; with `reason: "ALREADY_MEMBER"` when the e-mail is a member or has a pending, unexpired invitation) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role lacks permission; only an owner may invite an owner) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listInvitations: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['InvitationPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeInvitation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Invitation id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no pending invitation with this id in the caller’s organization: unknown, revoked or accepted) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  resendInvitation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Invitation id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['InvitationResponse'];
        };
      };
      /** @description VALIDATION_ERROR with `reason: "ALREADY_MEMBER"` (the e-mail became a member or was invited again) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role lacks permission; only an owner may invite an owner) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no pending invitation with this id in the caller’s organization: unknown, revoked or accepted) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  validateInvitation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The token from the invitation e-mail link. */
        token: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['InviteValidationResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  acceptInvitation: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The token from the invitation e-mail link. */
        token: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Grace Hopper",
         *       "password": "Correct-Horse-9"
         *     }
         */
        'application/json': components['schemas']['AcceptInvitationDto'];
      };
    };
    responses: {
      /** @description `{token, user, organization, role}`, or `{mfaRequired: true, tempToken}` when the existing account has MFA enabled (finish with `/auth/mfa/login`; the session opens in the inviting organization) */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AcceptInvitationResponse'];
        };
      };
      /** @description VALIDATION_ERROR (name or password missing or invalid for a new or unproven account; with `reason: "ALREADY_MEMBER"` when the account is already a member), INVITE_ALREADY_USED, INVITE_EXPIRED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (the address has a proven account and the caller neither is signed in as it nor sent its password; or an invalid bearer), INVALID_CREDENTIALS (wrong password), ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description REAUTHENTICATION_REQUIRED (the session was opened by another organization’s SSO); SSO_REQUIRED (joined; the organization enforces SSO for the address, `details.ssoUrl` is where sign-in starts) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (unknown or revoked invitation) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description EMAIL_IN_USE (an account for the e-mail was created at the same moment; retry) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getSsoConfig: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoConfigResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  replaceSsoConfig: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "provider": "oidc",
         *       "emailDomains": [
         *         "analytical-engines.example"
         *       ],
         *       "requireMfaEvenWithSso": false,
         *       "roleMappingRules": [
         *         {
         *           "pattern": "^governance-admins$",
         *           "role": "admin"
         *         },
         *         {
         *           "pattern": "^governance-reviewers$",
         *           "role": "viewer"
         *         }
         *       ],
         *       "oidc": {
         *         "issuer": "https://login.analytical-engines.example/",
         *         "clientId": "governance-service",
         *         "clientSecret": "Wq8~vX2nR5tLk9Zp3Yb7Hc1Jd4Fg6Ms0",
         *         "scopes": [
         *           "openid",
         *           "email",
         *           "profile",
         *           "groups"
         *         ],
         *         "groupsClaim": "groups"
         *       }
         *     }
         */
        'application/json': components['schemas']['PutSsoConfigDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoConfigResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteSsoConfig: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoConfigDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  testSsoConfig: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoTestResultResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listSsoDomains: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoDomainListResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  claimSsoDomain: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "domain": "analytical-engines.example"
         *     }
         */
        'application/json': components['schemas']['ClaimSsoDomainDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoDomainResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifySsoDomain: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The claimed domain, e.g. `bigcorp.example`. */
        domain: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoDomainResponse'];
        };
      };
      /** @description DOMAIN_NOT_VERIFIED (no TXT record holds the value; the body names `record`) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (the organization has no claim on this domain) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SSO_DOMAIN_TAKEN (another organization verified the domain first) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteSsoDomain: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The claimed domain, e.g. `bigcorp.example`. */
        domain: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Dropped. */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  initiateSso: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "email": "ada@analytical-engines.example"
         *     }
         */
        'application/json': components['schemas']['SsoInitiateDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoInitiateResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleSsoCallback: {
    parameters: {
      query?: {
        code?: string;
        state?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the dashboard: signed in, MFA next, or `error=sso_failed`. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  takeOAuthToken: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OAuthTokenResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  takeSsoMfaToken: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SsoMfaExchangeResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  initiateSaml: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "organizationId": "65f1c0ffee0000000000abcd"
         *     }
         */
        'application/json': components['schemas']['SamlInitiateDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SamlRedirectResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND, the same body whatever the reason */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleSamlCallback: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description A real message is the IdP’s signed XML, deflated (Redirect) or not (POST), then base64. */
    requestBody: {
      content: {
        /**
         * @example {
         *       "SAMLResponse": "PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiLz4=",
         *       "RelayState": "b3f1c9e2a4d5"
         *     }
         */
        'application/x-www-form-urlencoded': {
          /** @description The base64 SAML message. */
          SAMLResponse?: string;
          /** @description An IdP-initiated LogoutRequest (logout only). */
          SAMLRequest?: string;
          RelayState?: string;
        };
      };
    };
    responses: {
      /** @description To the dashboard: signed in, MFA next, or `error=sso_failed`. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getSamlMetadata: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Organization id (24 lower-case hex characters). */
        orgId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The EntityDescriptor. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/samlmetadata+xml': string;
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND, the same body whatever the reason */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  initiateSamlLogout: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SamlRedirectResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleSamlLogoutRedirect: {
    parameters: {
      query: {
        /** @description Base64. */
        Signature: string;
        SigAlg: string;
        RelayState?: string;
        /** @description Deflated, then base64. */
        SAMLResponse: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the dashboard’s login page (`?logout=1`). */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description SAML_MESSAGE_INVALID: unsigned, wrongly signed, malformed or unknown */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleSamlLogoutCallback: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description A real message is the IdP’s signed XML, deflated (Redirect) or not (POST), then base64. */
    requestBody: {
      content: {
        /**
         * @example {
         *       "SAMLResponse": "PHNhbWxwOkxvZ291dFJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiLz4=",
         *       "RelayState": "b3f1c9e2a4d5"
         *     }
         */
        'application/x-www-form-urlencoded': {
          /** @description The base64 SAML message. */
          SAMLResponse?: string;
          /** @description An IdP-initiated LogoutRequest (logout only). */
          SAMLRequest?: string;
          RelayState?: string;
        };
      };
    };
    responses: {
      /** @description To the dashboard’s login page, or back to the IdP. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description SAML_MESSAGE_INVALID: unsigned, wrongly signed, malformed or unknown */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  startGithubLogin: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To GitHub. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleGithubCallback: {
    parameters: {
      query?: {
        state?: string;
        code?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the dashboard: signed in, MFA next, `error=oauth_failed` or `error=sso_required`. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  startGoogleLogin: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To Google. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleGoogleCallback: {
    parameters: {
      query?: {
        state?: string;
        code?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the dashboard: signed in, MFA next, `error=oauth_failed` or `error=sso_required`. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  startMicrosoftLogin: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To Microsoft. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  handleMicrosoftCallback: {
    parameters: {
      query?: {
        state?: string;
        code?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description To the dashboard: signed in, MFA next, `error=oauth_failed` or `error=sso_required`. */
      302: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After) */
      429: {
        headers: {
          /** @description Seconds until the window ends */
          'Retry-After'?: number;
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getScimTokenStatus: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScimTokenStatusResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  rotateScimToken: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScimTokenCreatedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeScimToken: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScimTokenDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  scimGetServiceProviderConfig: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ServiceProviderConfig */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimServiceProviderConfig'];
          'application/json': components['schemas']['ScimServiceProviderConfig'];
        };
      };
    };
  };
  scimListResourceTypes: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ListResponse */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimResourceTypeListResponse'];
          'application/json': components['schemas']['ScimResourceTypeListResponse'];
        };
      };
    };
  };
  scimGetResourceType: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description `User` or `Group` */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ResourceType */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimResourceType'];
          'application/json': components['schemas']['ScimResourceType'];
        };
      };
      /** @description No such resource type */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimListSchemas: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ListResponse */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimSchemaListResponse'];
          'application/json': components['schemas']['ScimSchemaListResponse'];
        };
      };
    };
  };
  scimGetSchema: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description `urn:ietf:params:scim:schemas:core:2.0:User` or `urn:ietf:params:scim:schemas:core:2.0:Group` */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Schema */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimSchema'];
          'application/json': components['schemas']['ScimSchema'];
        };
      };
      /** @description No such schema */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimListUsers: {
    parameters: {
      query?: {
        /** @description RFC 7644 filter (e.g. `userName eq "a@b.c"`). */
        filter?: string;
        /** @description 1-based, default 1. */
        startIndex?: string;
        /** @description Default 100, at most 200. */
        count?: string;
        attributes?: string;
        excludedAttributes?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ListResponse of Users */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimUserListResponse'];
          'application/json': components['schemas']['ScimUserListResponse'];
        };
      };
      /** @description invalidFilter, invalidValue */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimCreateUser: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:schemas:core:2.0:User"
         *       ],
         *       "userName": "grace.hopper@analytical-engines.example",
         *       "externalId": "00u1ab2cd3EF4gh5i6j7",
         *       "name": {
         *         "givenName": "Grace",
         *         "familyName": "Hopper"
         *       },
         *       "displayName": "Grace Hopper",
         *       "active": true,
         *       "emails": [
         *         {
         *           "value": "grace.hopper@analytical-engines.example",
         *           "type": "work",
         *           "primary": true
         *         }
         *       ],
         *       "groups": [
         *         {
         *           "display": "governance-reviewers"
         *         }
         *       ]
         *     }
         */
        'application/scim+json': components['schemas']['ScimUserRequest'];
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:schemas:core:2.0:User"
         *       ],
         *       "userName": "grace.hopper@analytical-engines.example",
         *       "externalId": "00u1ab2cd3EF4gh5i6j7",
         *       "name": {
         *         "givenName": "Grace",
         *         "familyName": "Hopper"
         *       },
         *       "displayName": "Grace Hopper",
         *       "active": true,
         *       "emails": [
         *         {
         *           "value": "grace.hopper@analytical-engines.example",
         *           "type": "work",
         *           "primary": true
         *         }
         *       ],
         *       "groups": [
         *         {
         *           "display": "governance-reviewers"
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['ScimUserRequest'];
      };
    };
    responses: {
      /** @description The User; Location header */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimUser'];
          'application/json': components['schemas']['ScimUser'];
        };
      };
      /** @description invalidValue, invalidSyntax */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description uniqueness */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimGetUser: {
    parameters: {
      query?: {
        excludedAttributes?: string;
        attributes?: string;
      };
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description User */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimUser'];
          'application/json': components['schemas']['ScimUser'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description Not a member of the organization */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimReplaceUser: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:schemas:core:2.0:User"
         *       ],
         *       "userName": "grace.hopper@analytical-engines.example",
         *       "externalId": "00u1ab2cd3EF4gh5i6j7",
         *       "name": {
         *         "givenName": "Grace",
         *         "familyName": "Hopper"
         *       },
         *       "displayName": "Rear Admiral Grace Hopper",
         *       "active": true,
         *       "emails": [
         *         {
         *           "value": "grace.hopper@analytical-engines.example",
         *           "type": "work",
         *           "primary": true
         *         }
         *       ]
         *     }
         */
        'application/scim+json': components['schemas']['ScimUserRequest'];
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:schemas:core:2.0:User"
         *       ],
         *       "userName": "grace.hopper@analytical-engines.example",
         *       "externalId": "00u1ab2cd3EF4gh5i6j7",
         *       "name": {
         *         "givenName": "Grace",
         *         "familyName": "Hopper"
         *       },
         *       "displayName": "Rear Admiral Grace Hopper",
         *       "active": true,
         *       "emails": [
         *         {
         *           "value": "grace.hopper@analytical-engines.example",
         *           "type": "work",
         *           "primary": true
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['ScimUserRequest'];
      };
    };
    responses: {
      /** @description The User */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimUser'];
          'application/json': components['schemas']['ScimUser'];
        };
      };
      /** @description invalidValue */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description Not a member */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description uniqueness */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimDeleteUser: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deactivated */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description The last active owner */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description Not a member */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimPatchUser: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:api:messages:2.0:PatchOp"
         *       ],
         *       "Operations": [
         *         {
         *           "op": "replace",
         *           "path": "displayName",
         *           "value": "Grace B. Hopper"
         *         },
         *         {
         *           "op": "replace",
         *           "path": "active",
         *           "value": false
         *         }
         *       ]
         *     }
         */
        'application/scim+json': components['schemas']['ScimPatchOp'];
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:api:messages:2.0:PatchOp"
         *       ],
         *       "Operations": [
         *         {
         *           "op": "replace",
         *           "path": "displayName",
         *           "value": "Grace B. Hopper"
         *         },
         *         {
         *           "op": "replace",
         *           "path": "active",
         *           "value": false
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['ScimPatchOp'];
      };
    };
    responses: {
      /** @description The User */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimUser'];
          'application/json': components['schemas']['ScimUser'];
        };
      };
      /** @description invalidValue, noTarget, invalidSyntax */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description Not a member */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description uniqueness */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimListGroups: {
    parameters: {
      query?: {
        /** @description RFC 7644 filter (e.g. `userName eq "a@b.c"`). */
        filter?: string;
        /** @description 1-based, default 1. */
        startIndex?: string;
        /** @description Default 100, at most 200. */
        count?: string;
        attributes?: string;
        excludedAttributes?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description ListResponse of Groups */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimGroupListResponse'];
          'application/json': components['schemas']['ScimGroupListResponse'];
        };
      };
      /** @description invalidFilter */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimCreateGroup: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The role buckets are fixed */
      405: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimGetGroup: {
    parameters: {
      query?: {
        excludedAttributes?: string;
        attributes?: string;
      };
      header?: never;
      path: {
        /** @description `owner`, `admin`, `member` or `reviewer` */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Group */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimGroup'];
          'application/json': components['schemas']['ScimGroup'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No such group */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimReplaceGroup: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description A role bucket */
        id: unknown;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The role buckets are fixed */
      405: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimDeleteGroup: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description A role bucket */
        id: unknown;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The role buckets are fixed */
      405: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  scimPatchGroup: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:api:messages:2.0:PatchOp"
         *       ],
         *       "Operations": [
         *         {
         *           "op": "add",
         *           "path": "members",
         *           "value": [
         *             {
         *               "value": "65f1c0ffee00000000001234"
         *             }
         *           ]
         *         }
         *       ]
         *     }
         */
        'application/scim+json': components['schemas']['ScimPatchOp'];
        /**
         * @example {
         *       "schemas": [
         *         "urn:ietf:params:scim:api:messages:2.0:PatchOp"
         *       ],
         *       "Operations": [
         *         {
         *           "op": "add",
         *           "path": "members",
         *           "value": [
         *             {
         *               "value": "65f1c0ffee00000000001234"
         *             }
         *           ]
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['ScimPatchOp'];
      };
    };
    responses: {
      /** @description Changed */
      204: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description invalidValue, mutability, invalidFilter */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No or an invalid SCIM token */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description The plan does not include scim */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description No such group */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
      /** @description 600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter window */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/scim+json': components['schemas']['ScimError'];
          'application/json': components['schemas']['ScimError'];
        };
      };
    };
  };
  getAuditPublicKeys: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditPublicKeysResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listAuditEntries: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description Entries created at or after this instant. */
        from?: string;
        /** @description Entries created at or before this instant. */
        to?: string;
        /** @description Exact event type, or a prefix ending in `*` (for example `auth.*`). */
        eventType?: string;
        /** @description Entries whose user is this user id. */
        userId?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditEntryPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyAuditChain: {
    parameters: {
      query?: {
        /** @description Check every entry from the first, instead of only those after the prefix verified before. */
        full?: boolean;
        /** @description Also check every trace’s stored content against the content hash its latest audit entry records (`contentChecked`, `contentAltered`, …). Always a full pass over the traces, whatever `full` says. */
        content?: boolean;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditVerifyResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (the per-user limiter of chain verification, checkpoints and export; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (the service is saturated, or its database cannot serve the request now; see Retry-After) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listAuditCheckpoints: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditCheckpointPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createAuditCheckpoint: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditCheckpointResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description AUDIT_CHAIN_INVALID (the chain does not verify) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (the per-user limiter of chain verification, checkpoints and export; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (the service is saturated, or its database cannot serve the request now; see Retry-After) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  exportAuditLog: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description NDJSON stream of audit entries */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/x-ndjson': string;
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (the per-user limiter of chain verification, checkpoints and export; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (the service is saturated, or its database cannot serve the request now; see Retry-After) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getAuditEntry: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AuditEntryResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listTraces: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description Traces of this agent only. */
        agentId?: string;
        status?: 'approved' | 'flagged' | 'blocked' | 'success';
        /** @description Traces created at or after this instant. */
        from?: string;
        /** @description Traces created at or before this instant. */
        to?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TracePage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  ingestTrace: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD); default latest. */
        'X-Svc-Version'?: string;
        /** @description 1–255 characters; a repeat within 24 hours answers 409 SVC_DUPLICATE_REQUEST with the first trace id. */
        'Idempotency-Key'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "agentId": "661f0c2a9b1e4c0012345678",
         *       "inputContext": {
         *         "prompt": "Can I get a refund for order 4411? It arrived broken.",
         *         "systemPrompt": "You are the support assistant of an online shop. Refunds above 200 EUR need a human.",
         *         "context": {
         *           "customerTier": "gold",
         *           "orderTotalEur": 89.9
         *         },
         *         "conversationId": "conv-2026-04-11-0042"
         *       },
         *       "outputDecision": {
         *         "action": "issue_refund",
         *         "text": "I am sorry about that: order 4411 qualifies, and I have started a full refund of 89.90 EUR.",
         *         "actionObject": {
         *           "orderId": "4411",
         *           "amountEur": 89.9
         *         },
         *         "rationale": "Damaged on arrival, below the 200 EUR limit, customer in good standing.",
         *         "alternatives": [
         *           "offer_replacement"
         *         ],
         *         "toolCalls": [
         *           {
         *             "name": "lookup_order",
         *             "arguments": {
         *               "orderId": "4411"
         *             }
         *           }
         *         ]
         *       },
         *       "metadata": {
         *         "model": "gpt-4o",
         *         "promptTokens": 412,
         *         "completionTokens": 58
         *       },
         *       "confidence": 0.92
         *     }
         */
        'application/json': components['schemas']['IngestTraceDto'];
      };
    };
    responses: {
      /** @description Approved (status `approved`). */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IngestResultResponse'];
        };
      };
      /** @description Flagged for review: code SVC_FLAGGED_FOR_REVIEW, with the review item id. */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FlaggedEnvelopeDto'];
        };
      };
      /** @description VALIDATION_ERROR (`details` names each field over its limit or missing; bad Idempotency-Key), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SVC_BLOCKED_BY_POLICY (trace stored as blocked; `data` names the policies), or FORBIDDEN (key kind, agentId not the key’s agent or outside the key’s scope, read-only key). */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IngestTraceForbiddenResponse'];
        };
      };
      /** @description SVC_DUPLICATE_REQUEST: the Idempotency-Key was used within 24 hours; `data.id` is the first trace. */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DuplicateEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description PAYLOAD_TOO_LARGE */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE: more traces wait to be written than INGEST_MAX_PENDING; nothing was stored, retry after Retry-After seconds */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listSimilarTraces: {
    parameters: {
      query?: {
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SimilarTraceListResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyTraceContent: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TraceVerificationResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getTrace: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TraceResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  exportOtlpTraces: {
    parameters: {
      query?: never;
      header?: {
        /** @description gzip or identity. */
        'Content-Encoding'?: string;
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    /** @description ExportTraceServiceRequest (OTLP/JSON or protobuf). */
    requestBody: {
      content: {
        /**
         * @example {
         *       "resourceSpans": [
         *         {
         *           "resource": {
         *             "attributes": [
         *               {
         *                 "key": "service.name",
         *                 "value": {
         *                   "stringValue": "support-triage-bot"
         *                 }
         *               }
         *             ]
         *           },
         *           "scopeSpans": [
         *             {
         *               "scope": {
         *                 "name": "opentelemetry.instrumentation.openai",
         *                 "version": "0.48.0"
         *               },
         *               "spans": [
         *                 {
         *                   "traceId": "5b8efff798038103d269b633813fc60c",
         *                   "spanId": "eee19b7ec3c1b174",
         *                   "name": "chat gpt-4o",
         *                   "kind": 3,
         *                   "startTimeUnixNano": "1750000000000000000",
         *                   "endTimeUnixNano": "1750000001250500000",
         *                   "attributes": [
         *                     {
         *                       "key": "gen_ai.operation.name",
         *                       "value": {
         *                         "stringValue": "chat"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.provider.name",
         *                       "value": {
         *                         "stringValue": "openai"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.request.model",
         *                       "value": {
         *                         "stringValue": "gpt-4o"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.usage.input_tokens",
         *                       "value": {
         *                         "intValue": "97"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.usage.output_tokens",
         *                       "value": {
         *                         "intValue": "52"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.input.messages",
         *                       "value": {
         *                         "stringValue": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Can I get a refund for order 4411?\"}]}]"
         *                       }
         *                     },
         *                     {
         *                       "key": "gen_ai.output.messages",
         *                       "value": {
         *                         "stringValue": "[{\"role\":\"assistant\",\"finish_reason\":\"stop\",\"parts\":[{\"type\":\"text\",\"content\":\"Order 4411 qualifies: I have started the refund.\"}]}]"
         *                       }
         *                     }
         *                   ],
         *                   "status": {
         *                     "code": 1
         *                   }
         *                 }
         *               ]
         *             }
         *           ]
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['OtlpExportTraceServiceRequest'];
        'application/x-protobuf': string;
      };
    };
    responses: {
      /** @description Accepted; partialSuccess counts rejected spans. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OtlpExportTraceServiceResponse'];
          'application/x-protobuf': string;
        };
      };
      /** @description Malformed OTLP body (google.rpc.Status), or VERSION_UNSUPPORTED (error envelope). */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OtlpStatus'];
          'application/x-protobuf': string;
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
          'application/x-protobuf': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
          'application/x-protobuf': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description Body too large, or more GenAI spans than ingestion accepts at once (INGEST_MAX_PENDING): split the export (google.rpc.Status, code 8). */
      413: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OtlpStatus'];
        };
      };
      /** @description Unsupported Content-Type or Content-Encoding (google.rpc.Status). */
      415: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OtlpStatus'];
        };
      };
      /** @description SERVICE_UNAVAILABLE: the export’s spans would take ingestion past INGEST_MAX_PENDING; none was stored, retry after Retry-After seconds */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
          'application/x-protobuf': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listPolicies: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description true: inactive policies too. Default false (active only). */
        includeInactive?: 'true' | 'false';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PolicyPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createPolicy: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "No card numbers in answers",
         *       "description": "Blocks answers that read out a payment card number.",
         *       "outcome": "block",
         *       "match": "any",
         *       "conditions": [
         *         {
         *           "field": "outputDecision.text",
         *           "operator": "matches",
         *           "value": "\\b(?:\\d[ -]?){13,16}\\b"
         *         },
         *         {
         *           "field": "inputContext.prompt",
         *           "operator": "contains",
         *           "value": "card number"
         *         }
         *       ],
         *       "agentIds": [
         *         "661f0c2a9b1e4c0012345678"
         *       ],
         *       "priority": 10,
         *       "isActive": true
         *     }
         */
        'application/json': components['schemas']['CreatePolicyDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PolicyResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listPolicyTemplates: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PolicyTemplateListResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getPolicy: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Policy id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PolicyResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no policy with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deletePolicy: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Policy id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no policy with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updatePolicy: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Policy id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "description": "Flags low-confidence refunds for review instead of blocking them.",
         *       "outcome": "flag",
         *       "match": "all",
         *       "conditions": [
         *         {
         *           "field": "outputDecision.action",
         *           "operator": "equals",
         *           "value": "issue_refund"
         *         },
         *         {
         *           "field": "confidence",
         *           "operator": "lt",
         *           "value": 0.7
         *         }
         *       ],
         *       "priority": 20
         *     }
         */
        'application/json': components['schemas']['UpdatePolicyDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PolicyResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no policy with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listAgents: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createAgent: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Support triage bot",
         *       "description": "Routes incoming tickets to the right queue."
         *     }
         */
        'application/json': components['schemas']['CreateAgentDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedAgentResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getAgent: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Agent id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentDetailResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteAgent: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Agent id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateAgent: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Agent id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Support triage bot v2",
         *       "description": "Routes tickets and drafts first answers."
         *     }
         */
        'application/json': components['schemas']['UpdateAgentDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AgentResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  regenerateAgentKey: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Agent id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RegeneratedAgentKeyResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listApprovalPatterns: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description Only patterns in this state. */
        status?: 'observing' | 'pending_signoff' | 'active';
        /** @description Only this agent’s patterns. */
        agentId?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalPatternPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  signOffApprovalPattern: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Approval pattern id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalPatternResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description PATTERN_STATE_CONFLICT (the pattern is not in a state this move starts from) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  revokeApprovalPattern: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Approval pattern id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApprovalPatternResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description PATTERN_STATE_CONFLICT (the pattern is not in a state this move starts from) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listReviewItems: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description Only this agent’s items. */
        agentId?: string;
        status?: 'pending' | 'approved' | 'rejected' | 'escalated';
        /** @description A user id, `me` for the caller, or `none` for unassigned items. */
        assignedTo?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReviewItemPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  decideReviewItems: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "decision": "approve",
         *       "notes": "Checked against the refund policy: all within limits.",
         *       "ids": [
         *         "6620b3d2f1e8a70012ab9f01"
         *       ]
         *     }
         */
        'application/json': components['schemas']['BulkReviewDecisionDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['BulkDecisionResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  decideReviewItem: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Review item id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "decision": "reject",
         *       "notes": "The customer’s order was already refunded once."
         *     }
         */
        'application/json': components['schemas']['ReviewDecisionDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReviewItemResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no review item with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description ALREADY_DECIDED (approved or rejected already), ALREADY_ESCALATED, or TRACE_ERASED (notes on a trace whose content was erased) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  assignReviewItem: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Review item id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "assignedTo": "65f1c0ffee00000000001234"
         *     }
         */
        'application/json': components['schemas']['AssignReviewItemDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ReviewItemResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no review item with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listWebhooks: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createWebhook: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "url": "https://hooks.analytical-engines.example/governance",
         *       "events": [
         *         "trace.flagged",
         *         "review.completed",
         *         "alert.triggered"
         *       ],
         *       "filterAgentId": "661f0c2a9b1e4c0012345678",
         *       "description": "The on-call channel’s relay"
         *     }
         */
        'application/json': components['schemas']['CreateWebhookDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedWebhookResponse'];
        };
      };
      /** @description VALIDATION_ERROR, or WEBHOOK_URL_NOT_ALLOWED (the host resolves to a loopback, private, link-local or reserved address) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT (the organization has 50 webhooks) */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getWebhook: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteWebhook: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['DeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateWebhook: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "events": [
         *         "trace.flagged",
         *         "trace.blocked",
         *         "review.completed"
         *       ],
         *       "filterAgentId": null,
         *       "isActive": true
         *     }
         */
        'application/json': components['schemas']['UpdateWebhookDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookResponse'];
        };
      };
      /** @description VALIDATION_ERROR, or WEBHOOK_URL_NOT_ALLOWED (the host resolves to a loopback, private, link-local or reserved address) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  rotateWebhookSecret: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "gracePeriodSeconds": 86400
         *     }
         */
        'application/json': components['schemas']['RotateSecretDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookSecretResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  testWebhook: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description WEBHOOK_DISABLED */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listWebhookDeliveries: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        status?: 'pending' | 'succeeded' | 'failed';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  redeliverWebhookDelivery: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Webhook id (24 lower-case hex characters). */
        id: string;
        /** @description Delivery id (24 lower-case hex characters). */
        deliveryId: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['WebhookDeliveryResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (no webhook with this id in the caller’s organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description WEBHOOK_DISABLED */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  streamEvents: {
    parameters: {
      query?: {
        /** @description A stream token from `POST /auth/stream-token` (single use, 60 s). A JWT is refused. */
        token?: string;
        /** @description Replay the events after this event id first (as the `Last-Event-ID` header does; a browser EventSource cannot set headers on a new URL). */
        lastEventId?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The event stream */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (the service is saturated, or its database cannot serve the request now; see Retry-After) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getCpiRollup: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CpiRollupResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (the CPI read limiter; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getCpiAnalytics: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CpiAnalyticsResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (the CPI read limiter; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  ingestCpiFeedback: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "traceId": "6620b3d1a7c4e90012ab34cd",
         *       "action": "correct",
         *       "correctedDecision": {
         *         "decision": "offer_replacement",
         *         "confidence": 0.95
         *       },
         *       "feedbackNotes": "The customer asked for a replacement, not a refund.",
         *       "userEmail": "ada@analytical-engines.example"
         *     }
         */
        'application/json': components['schemas']['CpiIngestDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CpiIngestResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description TRACE_ERASED: the trace’s content was erased at its subject’s request */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  purgeTraces: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "before": "2025-01-01T00:00:00Z",
         *       "agentId": "661f0c2a9b1e4c0012345678",
         *       "status": "approved",
         *       "dryRun": true
         *     }
         */
        'application/json': components['schemas']['PurgeTracesDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PurgeResultResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listSubjectDecisions: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TracePage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getSubjectErasure: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SubjectErasureResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND: no erasure of this subject was asked for */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  eraseSubject: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      202: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SubjectErasureStartedResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SUBJECT_ON_HOLD: the subject is on legal hold */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  holdSubject: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SubjectHoldResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  releaseSubjectHold: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SubjectHoldResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND: the subject is not on hold */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  confirmIntegrationRecipient: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "token": "r7VbX2qL9mT4wZk1cN8hJ5sYf3dGa6eP"
         *     }
         */
        'application/json': components['schemas']['ConfirmRecipientDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['RecipientConfirmedResponse'];
        };
      };
      /** @description INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMIT_EXCEEDED (per IP address; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listIntegrations: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IntegrationPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createIntegration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "type": "email",
         *       "name": "Compliance team",
         *       "config": {
         *         "recipients": [
         *           "compliance@analytical-engines.example",
         *           "ada@analytical-engines.example"
         *         ]
         *       }
         *     }
         */
        'application/json': components['schemas']['CreateIntegrationDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedIntegrationResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getIntegration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Integration id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IntegrationResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteIntegration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Integration id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IntegrationDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateIntegration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Integration id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Compliance team and DPO",
         *       "config": {
         *         "recipients": [
         *           "compliance@analytical-engines.example",
         *           "dpo@analytical-engines.example"
         *         ]
         *       }
         *     }
         */
        'application/json': components['schemas']['UpdateIntegrationDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IntegrationResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  testIntegration: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Integration id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IntegrationTestResultResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (10 per user, 30 per organization per hour; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listFrias: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description Only assessments in this state. */
        status?: 'draft' | 'review' | 'approved' | 'archived';
        /** @description Case-insensitive substring of systemName. */
        search?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "systemName": "Credit scoring model v3",
         *       "deployerProfileId": "retail-lending",
         *       "purpose": "Scores consumer credit applications to prioritise them for a credit officer.",
         *       "affectedPersons": "Applicants for consumer credit in the EU, about 40,000 a year.",
         *       "usageContext": "Decision support only: a credit officer takes every decision.",
         *       "durationOfUse": "From May 2026, reviewed yearly.",
         *       "identifiedRisks": [
         *         {
         *           "title": "Unfair refusal of credit",
         *           "description": "The model may score applicants from some postcodes lower for reasons unrelated to solvency.",
         *           "likelihood": "medium",
         *           "severity": "high",
         *           "affectedRights": [
         *             "Non-discrimination (Charter art. 21)"
         *           ],
         *           "mitigation": "Quarterly bias audit by postcode; every refusal reviewed by a credit officer.",
         *           "residualRisk": "low"
         *         }
         *       ],
         *       "humanOversightSummary": "Every refusal is read and signed by a credit officer, who may overrule the score.",
         *       "complaintsMechanism": "Applicants may contest a decision through the bank’s complaints desk within 30 days."
         *     }
         */
        'application/json': components['schemas']['CreateFriaDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "usageContext": "Decision support for credit officers; never used to refuse without a human decision.",
         *       "identifiedRisks": [
         *         {
         *           "title": "Unfair refusal of credit",
         *           "description": "The model may score applicants from some postcodes lower for reasons unrelated to solvency.",
         *           "likelihood": "medium",
         *           "severity": "high",
         *           "affectedRights": [
         *             "Non-discrimination (Charter art. 21)"
         *           ],
         *           "mitigation": "Quarterly bias audit by postcode; every refusal reviewed by a credit officer.",
         *           "residualRisk": "low"
         *         },
         *         {
         *           "title": "Opaque reasons",
         *           "severity": "medium",
         *           "mitigation": "Reason codes shown."
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['UpdateFriaDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  verifyFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaVerificationResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listFriaHistory: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaHistoryEntryPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  transitionFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "status": "review"
         *     }
         */
        'application/json': components['schemas']['TransitionFriaDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VALIDATION_ERROR (status missing or unknown); FRIA_TRANSITION_FAILED (a move the lifecycle does not allow) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  submitFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VALIDATION_ERROR (status missing or unknown); FRIA_TRANSITION_FAILED (a move the lifecycle does not allow) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  approveFria: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Assessment id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['FriaResponse'];
        };
      };
      /** @description VALIDATION_ERROR (status missing or unknown); FRIA_TRANSITION_FAILED (a move the lifecycle does not allow) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description An unexpected failure of the operation, logged with its cause; the body carries only the request id and the operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED */
      500: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getComplianceCatalogue: {
    parameters: {
      query?: {
        framework?: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CatalogueResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getComplianceCrosswalk: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CrosswalkResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getComplianceMapping: {
    parameters: {
      query?: {
        framework?: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MappingResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateComplianceMapping: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "framework": "iso-42001",
         *       "clauseId": "6.1.4",
         *       "status": "partial",
         *       "evidence": "Impact assessment of the credit model done; the support bot’s is scheduled for June.",
         *       "evidenceRefs": [
         *         {
         *           "type": "policy",
         *           "id": "661f0d4e8a2b3c0012345abc"
         *         }
         *       ]
         *     }
         */
        'application/json': components['schemas']['UpdateMappingDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['MappingUpdateResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getLegacyMappingNotes: {
    parameters: {
      query?: {
        framework?: 'iso-42001' | 'eu-ai-act' | 'nist-rmf';
      };
      header?: {
        /** @description Response header: the retirement date. */
        Sunset?: string;
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LegacyNotesResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  replaceLegacyMappingNotes: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "framework": "iso-42001",
         *       "notes": {
         *         "6.1.4": "Impact assessment done for the credit model.",
         *         "8.4": "Yearly, by the risk committee."
         *       }
         *     }
         */
        'application/json': components['schemas']['ReplaceLegacyNotesDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LegacyNotesResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listIncidents: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        status?: 'open' | 'reported' | 'closed';
        /** @description true: only open incidents past their deadline; false: only those that are not. */
        overdue?: 'true' | 'false';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IncidentPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createIncident: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "title": "Refunds issued twice for the same order",
         *       "description": "The support bot issued a second refund when a customer repeated the request.",
         *       "category": "other",
         *       "agentId": "661f0c2a9b1e4c0012345678",
         *       "traceId": "6620b3d1a7c4e90012ab34cd",
         *       "awareAt": "2026-04-10T08:30:00Z"
         *     }
         */
        'application/json': components['schemas']['CreateIncidentDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IncidentResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getIncident: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Incident id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IncidentResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateIncident: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Incident id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "status": "reported",
         *       "reportedAt": "2026-04-11T09:00:00Z"
         *     }
         */
        'application/json': components['schemas']['UpdateIncidentDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['IncidentResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getComplianceReport: {
    parameters: {
      query?: {
        /** @description Start of the period (inclusive). Default: 30 days before `to`. */
        from?: string;
        /** @description End of the period (exclusive). Default: now. */
        to?: string;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The PDF, as an attachment (Content-Disposition: attachment). */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/pdf': string;
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description RATE_LIMITED (10 per user per hour; see Retry-After) */
      429: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (no usable Chromium: the message names CHROMIUM_PATH; renders saturated; a render timed out) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listScheduledReports: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        /** @description true: inactive reports too. */
        includeInactive?: 'true' | 'false';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduledReportPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createScheduledReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Weekly governance digest",
         *       "frequency": "weekly",
         *       "recipients": [
         *         "compliance@analytical-engines.example",
         *         "cto@analytical-engines.example"
         *       ],
         *       "includeMetrics": true,
         *       "includeTopAgents": true,
         *       "includeAlerts": true,
         *       "includeLowConf": false,
         *       "isActive": true
         *     }
         */
        'application/json': components['schemas']['CreateScheduledReportDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduledReportResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getScheduledReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Scheduled report id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduledReportResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteScheduledReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Scheduled report id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduledReportDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateScheduledReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Scheduled report id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "frequency": "monthly",
         *       "recipients": [
         *         "board@analytical-engines.example"
         *       ],
         *       "includeLowConf": true
         *     }
         */
        'application/json': components['schemas']['UpdateScheduledReportDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ScheduledReportResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  sendScheduledReportNow: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Scheduled report id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['SendNowResultResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SEND_FAILED (the mail server refused the digest, or none is configured) */
      502: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listAlerts: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
        state?: 'ok' | 'firing';
        isActive?: 'true' | 'false';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  createAlert: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "name": "Refund bot blocks",
         *       "metric": "block_rate",
         *       "agentId": "661f0c2a9b1e4c0012345678",
         *       "comparison": "gt",
         *       "threshold": 0.2,
         *       "windowMinutes": 60,
         *       "integrationIds": [
         *         "6621a0f3c2d1e40012cd5678"
         *       ],
         *       "isActive": true
         *     }
         */
        'application/json': components['schemas']['CreateAlertDto'];
      };
    };
    responses: {
      /** @description Success */
      201: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description CONFLICT */
      409: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getAlert: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Alert rule id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  deleteAlert: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Alert rule id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertDeletedResponse'];
        };
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  updateAlert: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Alert rule id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        /**
         * @example {
         *       "threshold": 0.3,
         *       "windowMinutes": 120,
         *       "agentId": null
         *     }
         */
        'application/json': components['schemas']['UpdateAlertDto'];
      };
    };
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertResponse'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  listAlertHistory: {
    parameters: {
      query?: {
        /** @description Page number, starting at 1. */
        page?: number;
        /** @description Page size; values above the maximum are clamped. */
        limit?: number;
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Alert rule id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Success */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['AlertTransitionPage'];
        };
      };
      /** @description VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getTraceExplanation: {
    parameters: {
      query?: {
        /** @description `pdf`: the explanation as a PDF written for the person concerned, instead of the JSON envelope. */
        format?: 'json' | 'pdf';
      };
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description Trace id (24 lower-case hex characters). */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The explanation (JSON envelope), or with `format=pdf` the PDF as an attachment. */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['TraceExplanationResponse'];
          'application/pdf': string;
        };
      };
      /** @description VALIDATION_ERROR (`format` is neither json nor pdf) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description NOT_FOUND (absent, or in another organization) */
      404: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (format=pdf: no usable Chromium, renders saturated, or a render timed out) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  getSubjectReport: {
    parameters: {
      query?: never;
      header?: {
        /** @description Schema version (YYYY-MM-DD) to apply; defaults to the latest. */
        'X-Svc-Version'?: string;
      };
      path: {
        /** @description The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. It is hashed with the organization’s subject key at once and never stored, logged or returned. */
        ref: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The PDF, as an attachment (Content-Disposition: attachment). */
      200: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/pdf': string;
        };
      };
      /** @description VALIDATION_ERROR (the reference is longer than 200 characters) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED */
      401: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it) */
      403: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description SERVICE_UNAVAILABLE (no usable Chromium, renders saturated, or a render timed out) */
      503: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          'Retry-After': components['headers']['Retry-After'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  streamEventsWebSocket: {
    parameters: {
      query: {
        token: string;
        lastEventId?: string;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Switching protocols: the WebSocket is open */
      101: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version) */
      400: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12) */
      410: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
      /** @description UPGRADE_REQUIRED (a plain GET) */
      426: {
        headers: {
          'X-Request-Id': components['headers']['X-Request-Id'];
          'X-Svc-Version': components['headers']['X-Svc-Version'];
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ErrorEnvelopeDto'];
        };
      };
    };
  };
  traceApprovedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TraceApprovedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  traceFlaggedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TraceFlaggedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  traceBlockedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['TraceBlockedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  reviewCompletedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ReviewCompletedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  reviewEscalatedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ReviewEscalatedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  friaApprovedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['FriaApprovedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  complianceMappingUpdatedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ComplianceMappingUpdatedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  cpiApprovedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CpiApprovedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  cpiCorrectedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CpiCorrectedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  alertTriggeredWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AlertTriggeredEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  alertResolvedWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AlertResolvedEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  auditCheckpointWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['AuditCheckpointEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  webhookTestWebhook: {
    parameters: {
      query?: never;
      header: {
        /** @description The event id: the same on every retry, so receivers deduplicate on it. */
        'webhook-id': string;
        /** @description Seconds since the epoch when this attempt was signed. */
        'webhook-timestamp': string;
        /** @description Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of `<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while a rotation’s grace period runs. */
        'webhook-signature': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['WebhookTestEvent'];
      };
    };
    responses: {
      /** @description Any 2xx status within 10 seconds acknowledges the delivery. */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again). */
      410: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is retried with backoff (6 attempts in all). */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
}
