import { moduleErrorCodes } from '#platform';
/**
 * Error codes of trace ingestion, beside the generic ones in the platform (docs/agent-builders.md,
 * "Decision pipeline").
 */
export const TraceErrorCode = moduleErrorCodes({
  BLOCKED_BY_POLICY: 'SVC_BLOCKED_BY_POLICY',
  DUPLICATE_REQUEST: 'SVC_DUPLICATE_REQUEST',
  /** The trace's content was erased (POST /subjects/:ref/erasure): a change of its content is refused. */
  TRACE_ERASED: 'TRACE_ERASED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof TraceErrorCode)[keyof typeof TraceErrorCode], true> {}
}
