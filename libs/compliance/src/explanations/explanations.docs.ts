import { type ApiResponseOptions, getSchemaPath } from '@nestjs/swagger';
import { envelopeOf, objectIdParam } from '#platform';
import { TraceExplanationDto } from './dto/trace-explanation.dto.js';

/** The OpenAPI text of the explanation route (trace-explanations.controller.ts), kept out of the controller. */

export const TRACE_ID = objectIdParam('id', 'Trace id');

export const EXPLANATION_DOCS = {
  explain:
    'Any role, and a workspace key that may read the trace (EU AI Act art. 86: the explanation of one decision to ' +
    'the person it concerns). From stored records only: the agent and its stated purpose (its description), the ' +
    'decision’s status and confidence, each policy that matched with its conditions in plain English (from the ' +
    'policy’s stored conditions; the text says so when the policy was edited after the decision, or deleted), the ' +
    'human review (the reviewer’s role, never who they are; the time, the decision and the notes), the approval ' +
    'pattern that approved it automatically, later human feedback (`corrections`), and the organization’s ' +
    '`contestContact` (PATCH /organizations/current). A trace whose content was erased is explained from what ' +
    'remains (`erasedAt` set). `format=pdf` answers the same as a PDF written for the person concerned ' +
    '(`Content-Disposition: attachment`), rendered by Chromium: 503 SERVICE_UNAVAILABLE when none is usable, when ' +
    'renders are saturated or one times out. Another organization’s trace, one outside a key’s scope, or a ' +
    'malformed id answers 404. `Cache-Control: no-store`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const EXPLANATION_ERRORS = {
  explain: {
    400: 'VALIDATION_ERROR (`format` is neither json nor pdf)',
    503: 'SERVICE_UNAVAILABLE (format=pdf: no usable Chromium, renders saturated, or a render timed out)',
  },
} as const;

/** The answer: the explanation in the envelope, or (format=pdf) the PDF itself, outside it. */
export const EXPLANATION_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'The explanation (JSON envelope), or with `format=pdf` the PDF as an attachment.',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(envelopeOf(TraceExplanationDto, 'one')) } },
      'application/pdf': { schema: { type: 'string', format: 'binary' } },
    },
  },
];
