import { moduleErrorCodes } from '#platform';
/** Error codes of approval patterns, beside the generic ones in the platform. */
export const ApprovalPatternErrorCode = moduleErrorCodes({
  /** Signoff of a pattern that is not awaiting it, or revocation of one that only observes. */
  PATTERN_STATE_CONFLICT: 'PATTERN_STATE_CONFLICT',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<
    (typeof ApprovalPatternErrorCode)[keyof typeof ApprovalPatternErrorCode],
    true
  > {}
}
