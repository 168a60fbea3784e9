/**
 * Error codes of trace ingestion, beside the generic ones in the platform (docs/agent-builders.md,
 * "Decision pipeline").
 */
export const TraceErrorCode = {
  BLOCKED_BY_POLICY: 'SVC_BLOCKED_BY_POLICY',
  DUPLICATE_REQUEST: 'SVC_DUPLICATE_REQUEST',
} as const;

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof TraceErrorCode)[keyof typeof TraceErrorCode], true> {}
}
