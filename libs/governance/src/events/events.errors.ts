import { moduleErrorCodes } from '#platform';
/** Error codes of the event stream, beside the generic ones in the platform. */
export const EventStreamErrorCode = moduleErrorCodes({
  /** A plain GET of the WebSocket route. */
  UPGRADE_REQUIRED: 'UPGRADE_REQUIRED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<
    (typeof EventStreamErrorCode)[keyof typeof EventStreamErrorCode],
    true
  > {}
}
