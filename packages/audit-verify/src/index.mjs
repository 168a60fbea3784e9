export { canonicalJson } from './canonical-json.mjs';
export { entryHash, GENESIS_HASH, HASHED_FIELDS, hashedContent } from './entry-hash.mjs';
export { BREAK_REASONS, ChainVerifier } from './chain.mjs';
export { decimalValue, isCanonicalNumber, MAX_DEPTH, scanJson } from './json-scan.mjs';
export {
  checkpointSigningInput,
  isCheckpoint,
  parseCheckpointsText,
  verifyCheckpointSignature,
} from './checkpoints.mjs';
export { jwkThumbprint, Keyring, loadPublishedKey, parseKeysText } from './keys.mjs';
export {
  contentHashOf,
  CONTENT_FIELDS,
  CONTENT_STATUSES,
  isTrace,
  loadTrace,
  parseTracesText,
  TraceContentCheck,
  traceContent,
} from './trace-content.mjs';
export {
  formatReport,
  InputError,
  printable,
  loadCheckpoints,
  loadTraces,
  verifyAuditFiles,
  verifyAuditLines,
} from './verify.mjs';
