import type { ApiResponseOptions } from '@nestjs/swagger';

/** The OpenAPI text of the subject's report (subject-reports.controller.ts), kept out of the controller. */

export const SUBJECT_REPORT_DOCS = {
  report:
    'Owner or admin. The decisions about the person (GDPR article 15) as a PDF written for them, in plain words: ' +
    'for each decision about the reference, across agents and across POST /traces and OTLP, newest first, when it ' +
    'was made, the agent’s name and description, the outcome and the confidence, each policy that matched in ' +
    'plain words, the human part (the reviewer’s role, never who they are; the time and the outcome; or the ' +
    'approval pattern that approved it; or none), later corrections, and at the end how to contest a decision ' +
    '(the organization’s `contestContact`, PATCH /organizations/current). Each decision says what GET ' +
    '/traces/{id}/explanation says of it. Erased decisions are listed with what remains and a note that their ' +
    'content was erased. At most 500 decisions, the newest; the PDF says how many more the records hold. A ' +
    'reference no trace carries answers a PDF saying so. The reference is printed in the PDF, which is for the ' +
    'person; it is never logged. Audited `subject.accessed` with `{what: "report", decisions}` (and `total` ' +
    'when more exist), the subject named by its hash. Rendered by Chromium: 503 SERVICE_UNAVAILABLE when none ' +
    'is usable, when renders are saturated or one times out. `Cache-Control: no-store`.',
} as const;

/** The codes of the route's error statuses, where they differ from the generic ones. */
export const SUBJECT_REPORT_ERRORS = {
  report: {
    400: 'VALIDATION_ERROR (the reference is longer than 200 characters)',
    503: 'SERVICE_UNAVAILABLE (no usable Chromium, renders saturated, or a render timed out)',
  },
} as const;

/** The answer: the PDF itself, outside the envelope. */
export const SUBJECT_REPORT_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'The PDF, as an attachment (Content-Disposition: attachment).',
    content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
  },
];
