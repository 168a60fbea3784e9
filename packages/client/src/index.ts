export {
  type CallMethod,
  createGovernanceClient,
  type FetchFunction,
  type GovernanceClient,
  type GovernanceClientOptions,
} from './client.js';
export type { Credentials } from './credentials.js';
export { Download } from './download.js';
export {
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
  GovernanceError,
  isGovernanceError,
} from './errors.js';
export type { EventOf, EventType, GovernanceEvent } from './events.js';
export type { RetryOptions } from './retry.js';
export { type SseMessage, SseParser } from './sse.js';
export type {
  EventSubscription,
  ReconnectOptions,
  SubscribeOptions,
  WebSocketConstructor,
  WebSocketLike,
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
