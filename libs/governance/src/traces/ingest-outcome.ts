import type { TraceRow } from './trace.schema.js';

/** What storing one trace came to: the stored row, or the id of the trace an Idempotency-Key already named. */
export type IngestOutcome = { kind: 'stored'; trace: TraceRow } | { kind: 'duplicate'; id: string };
