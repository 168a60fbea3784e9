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
  /** The subject is under a legal hold: erasure is refused until it is lifted. */
  SUBJECT_ON_HOLD: 'SUBJECT_ON_HOLD',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof TraceErrorCode)[keyof typeof TraceErrorCode], true> {}
}
