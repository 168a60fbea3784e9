/**
 * How long a user's sessions last without activity, as chosen in their settings (docs/identity-administrators.md,
 * "Identity, roles and plans"; test/sessions.e2e-spec.ts).
 */
export const SESSION_TIMEOUTS = ['1h', '8h', '24h', '7d'] as const;
export type SessionTimeout = (typeof SESSION_TIMEOUTS)[number];
