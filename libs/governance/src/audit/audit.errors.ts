import { moduleErrorCodes } from '#platform';
/** Error codes of the audit module, beside the generic ones in the platform. */
export const AuditErrorCode = moduleErrorCodes({
  /** A checkpoint was asked of a chain that does not verify (or of an organization without entries). */
  AUDIT_CHAIN_INVALID: 'AUDIT_CHAIN_INVALID',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof AuditErrorCode)[keyof typeof AuditErrorCode], true> {}
}
