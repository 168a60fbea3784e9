/**
 * PII detection and masking, framework-free: detectors for e-mail addresses, phone numbers, payment cards, IBANs,
 * IP addresses and national identifiers (US, UK, DE, FR, ES, IT, NL, PL), each a linear scan with a validator, and the
 * masking of texts and JSON values. Used by the `containsPii` policy condition and by trace masking.
 */
export { DEFAULT_MIN_SCORE, isPiiEntity, PII_ENTITIES, piiLabel } from './entities.js';
export type { PiiEntity, PiiMatch } from './entities.js';
export { detectPii, piiTypesIn } from './detect.js';
export { maskJson, maskText } from './mask.js';
export type { MaskOptions } from './mask.js';
