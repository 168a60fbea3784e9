/**
 * Codes let the endpoint pick the status without parsing messages: MALFORMED → 400,
 * UNSUPPORTED_MEDIA_TYPE / UNSUPPORTED_ENCODING → 415, PAYLOAD_TOO_LARGE → 413.
 */
export type OtlpDecodeErrorCode =
  'MALFORMED' | 'UNSUPPORTED_MEDIA_TYPE' | 'UNSUPPORTED_ENCODING' | 'PAYLOAD_TOO_LARGE';

/** Thrown for any request body the OTLP decoder cannot turn into a trace request. */
export class OtlpDecodeError extends Error {
  override readonly name = 'OtlpDecodeError';

  constructor(
    readonly code: OtlpDecodeErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
