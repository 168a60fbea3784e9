import type { ApiResponseOptions } from '@nestjs/swagger';
import { objectIdParam } from '#platform';

/**
 * The OpenAPI text of the reports routes (reports.controller.ts, scheduled-reports.controller.ts), kept out of
 * the controllers.
 */

export const SCHEDULED_REPORT_ID = objectIdParam('id', 'Scheduled report id');

const WHO = 'Owner or admin; plan feature scheduledReports (Governance and above).';

export const REPORT_DOCS = {
  compliance:
    'Any role, any plan; 10 per user per hour (429 RATE_LIMITED with Retry-After beyond). The period is ' +
    '[from, to), by default the 30 days before now, at most 366 days. Sections, in order: cover (organization, ' +
    'period, generated at, schema version); trace volume by status with a chart; average confidence by status; ' +
    'policy coverage; review backlog; audit chain verification (valid, entries, head hash, first break); the ' +
    'incident clock; the regulator-mapping table of every framework; FRIAs by status. Rendered by Chromium ' +
    '(CHROMIUM_PATH, else a system Chromium, else the one bundled in the npm package); 503 SERVICE_UNAVAILABLE ' +
    'when none is usable, when renders are saturated or when one times out. A large organization may take ' +
    'seconds.',
  list: `${WHO} Active reports, newest first; includeInactive=true lists all. Limit default 50, max 100.`,
  create:
    `${WHO} Recipients are lower-cased and de-duplicated, then 1 to 20 are allowed. nextSendAt is the creation ` +
    'time, so the first digest goes out on the scheduler’s next tick. Records the creator and their e-mail. ' +
    'Writes `report.schedule.create`.',
  get: WHO,
  update:
    `${WHO} Any field, including isActive (false pauses it, true resumes it) and nextSendAt. ` +
    'Writes `report.schedule.update`.',
  remove: `${WHO} A hard delete. Writes \`report.schedule.delete\`.`,
  sendNow:
    `${WHO} Renders the digest for the period since the last send and sends it at once, active or not: ` +
    'sentCount and lastSentAt change, nextSendAt does not. 502 SEND_FAILED when the mail server does not ' +
    'accept it (nothing changes).',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const REPORT_ERRORS = {
  compliance: {
    429: 'RATE_LIMITED (10 per user per hour; see Retry-After)',
    503: 'SERVICE_UNAVAILABLE (no usable Chromium: the message names CHROMIUM_PATH; renders saturated; a render timed out)',
  },
  sendNow: { 502: 'SEND_FAILED (the mail server refused the digest, or none is configured)' },
} as const;

/** The compliance report's answer: the PDF itself, outside the envelope. */
export const COMPLIANCE_PDF_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'The PDF, as an attachment (Content-Disposition: attachment).',
    content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
  },
];
