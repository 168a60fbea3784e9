export {
  type CallMethod,
  createGovernanceClient,
  type FetchFunction,
  type GovernanceClient,
  type GovernanceClientOptions,
} from './client.js';
export { type Credentials, RedirectRefusedError, SESSION_ROUTES } from './credentials.js';
export { Download } from './download.js';
export {
  codeOfStatus,
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  GovernanceError,
  isGovernanceError,
  type ServiceErrorCode,
  type UnknownErrorCode,
} from './errors.js';
export type { EventOf, EventType, GovernanceEvent } from './events.js';
export type { RetryOptions } from './retry.js';
export { type SseMessage, SseParser } from './sse.js';
export {
  type EventSubscription,
  type ReconnectOptions,
  SSE_IDLE_TIMEOUT_MS,
  type SubscribeOptions,
  WEBSOCKET_IDLE_TIMEOUT_MS,
  type WebSocketConstructor,
  type WebSocketLike,
} from './stream.js';
export type { PolicyMatch, SendTraceOptions, TraceInput, TraceResult, Verdict } from './traces.js';
export type {
  ApiClient,
  CallInit,
  components,
  HttpMethod,
  InitArgs,
  Page,
  PageItem,
  PaginatedPath,
  Pagination,
  paths,
  PathsWith,
  ResultOf,
  Schemas,
} from './types.js';
export {
  type VerifyWebhookInput,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
} from './webhooks.js';

/** This package's version. */
export const VERSION = '0.1.0';
