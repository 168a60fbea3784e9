import type { ApiParamOptions } from '@nestjs/swagger';

/** The OpenAPI text of the subjects routes (subjects.controller.ts). */

export const SUBJECT_REF: ApiParamOptions = {
  name: 'ref',
  description:
    'The subject reference the traces were sent with (`subjectRef`), URL-encoded: 1–200 characters once decoded. ' +
    'It is hashed with the organization’s subject key at once and never stored, logged or returned.',
  schema: { type: 'string', minLength: 1, maxLength: 200 },
};

export const SUBJECT_DOCS = {
  decisions:
    'Every decision about the person (GDPR article 15), across agents and across POST /traces and OTLP, newest ' +
    'first; erased traces are listed with their skeleton (content null, `erasedAt` set). Each call is audited ' +
    '(`subject.accessed`, the subject named by its hash). page default 1; limit default 20, values above 100 are ' +
    'clamped to 100. A reference no trace carries answers an empty page.',
  requestErasure:
    'Erases the person’s content (GDPR article 17) in the background, in batches of 1,000 traces a transaction: ' +
    'the traces’ inputContext, outputDecision, metadata and rationale (read as null, `erasedAt` set), the ' +
    'similarity text, the content hash’s salt, review notes, CPI verdicts’ notes, notes in stored ' +
    'events (the stream’s replay, webhook redeliveries) and receivers’ answers to those events. Status, ' +
    'confidence, policy results, reviewers and times stay, and the audit chain still verifies; GET ' +
    '/traces/{id}/verify then says `erased`. Answers 202 with the job; while one is running, the same job. Audited ' +
    '`subject.erasure_requested`, then `subject.erased` with the counts. 409 SUBJECT_ON_HOLD while a legal hold ' +
    'is in place.',
  erasure: 'The latest erasure of the subject and its progress; 404 when none was asked for.',
  hold:
    'Places a legal hold: while it is in place, erasure is refused (409 SUBJECT_ON_HOLD), a running erasure stops ' +
    'at its next batch, and retention purges (POST /traces/purge, the daily purge past the retention period) keep ' +
    'the subject’s traces. Idempotent; audited `subject.hold_placed` when placed.',
  release:
    'Lifts the legal hold (answers `held: false`); audited `subject.hold_lifted`. 404 when the subject is not on hold.',
} as const;

export const SUBJECT_ERRORS = {
  requestErasure: { 409: 'SUBJECT_ON_HOLD: the subject is on legal hold' },
  erasure: { 404: 'NOT_FOUND: no erasure of this subject was asked for' },
  release: { 404: 'NOT_FOUND: the subject is not on hold' },
} as const;
