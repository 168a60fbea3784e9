import { moduleErrorCodes } from '#platform';
/** Error codes of reports, beside the generic ones in the platform. */
export const ReportsErrorCode = moduleErrorCodes({
  /** POST /reports/send-now/:id: the SMTP server refused the digest, or none is configured (502). */
  SEND_FAILED: 'SEND_FAILED',
});

export type ReportsErrorCodeName = (typeof ReportsErrorCode)[keyof typeof ReportsErrorCode];

declare module '#platform' {
  interface ModuleErrorCodes extends Record<ReportsErrorCodeName, true> {}
}
