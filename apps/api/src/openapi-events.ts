import type { OpenAPIObject } from '@nestjs/swagger';
import { PII_ENTITIES } from '#platform';

type Schema = Record<string, unknown>;
type Schemas = Record<string, Schema>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ID = { type: 'string', pattern: '^[0-9a-f]{24}$' } as const;
const NULLABLE_ID = { type: ['string', 'null'], pattern: '^[0-9a-f]{24}$' } as const;
const DATE_TIME = { type: 'string', format: 'date-time' } as const;
const object = (properties: Schemas, required = Object.keys(properties), extra: Schema = {}): Schema => ({
  type: 'object',
  required,
  properties,
  ...extra,
});

/** The enum of a DTO property already in the document: the events say what the routes say. */
function enumOf(document: OpenAPIObject, schema: string, property: string): unknown[] {
  const values = (
    document.components?.schemas?.[schema] as
      { properties?: Record<string, { enum?: unknown[] }> } | undefined
  )?.properties?.[property]?.enum;
  if (!values?.length) throw new Error(`${schema}.${property} has no enum in the document`);
  return values;
}

/**
 * One event, as each channel sends it: webhooks post `{type, timestamp, data}` (its id in the `webhook-id`
 * header), SSE frames carry it in their `data:` line (the id in `id:`), WebSocket messages add `id`.
 */
interface EventDoc {
  /** The event name (`trace.flagged`): a webhook subscribes to it, the stream names it. */
  type: string;
  /** Its component: `TraceFlaggedEvent`. */
  name: string;
  summary: string;
  /** The schema of `data`, a `$ref` to a schema of this file or of the document. */
  data: Schema;
}

/** The `data` schemas of the events, by name (built where each event is published; see `eventDocs`). */
function dataSchemas(document: OpenAPIObject): Schemas {
  const framework = enumOf(document, 'UpdateMappingDto', 'framework');
  const clauseStatus = enumOf(document, 'UpdateMappingDto', 'status');
  const metric = enumOf(document, 'CreateAlertDto', 'metric');
  const comparison = enumOf(document, 'CreateAlertDto', 'comparison');
  const feedbackAction = enumOf(document, 'CpiIngestDto', 'action');
  const traceStatus = enumOf(document, 'TraceDto', 'status');
  const reviewFields = {
    reviewItemId: ID,
    traceId: ID,
    agentId: ID,
    notes: { type: ['string', 'null'], description: 'The reviewer’s notes.' },
    decidedAt: DATE_TIME,
  };
  return {
    // libs/governance/src/traces/trace-events.ts (traceEventOf): a trace's audit entry announced as its event.
    TraceEventData: object(
      {
        traceId: ID,
        agentId: { ...NULLABLE_ID, description: 'The trace’s agent.' },
        status: { type: 'string', enum: ['approved', 'flagged', 'blocked'], description: 'The outcome.' },
        confidence: { type: ['number', 'null'], minimum: 0, maximum: 1 },
        policyIds: { type: 'array', items: ID, description: 'The policies that matched.' },
        reviewItemId: { ...NULLABLE_ID, description: 'The pending review item of a flagged trace.' },
        autoApprovedBy: {
          ...ID,
          description:
            'trace.approved only: the approval pattern that approved a trace policies flagged (absent otherwise).',
        },
        piiEntities: {
          type: 'array',
          items: { type: 'string', enum: [...PII_ENTITIES] },
          description:
            'The PII types the matched policies’ containsPii conditions found: types only, never values (absent when ' +
            'none did).',
        },
      },
      ['traceId', 'agentId', 'status', 'confidence', 'policyIds', 'reviewItemId'],
      {
        description: 'The outcome of ingesting a trace, not its contents (read those with GET /traces/{id}).',
      },
    ),
    // libs/governance/src/review/review-queue.service.ts (decide), libs/governance/src/cpi/cpi-ingest.service.ts
    // (closureDetails: feedback on a trace closes its undecided item).
    ReviewCompletedEventData: object(
      {
        ...reviewFields,
        decision: { type: 'string', enum: ['approve', 'reject'] },
        status: { type: 'string', enum: ['approved', 'rejected'], description: 'The item’s status now.' },
        traceStatus: {
          type: 'string',
          enum: traceStatus,
          description: 'The trace’s status now: approved or blocked by a reviewer, success after feedback.',
        },
        decidedBy: { ...NULLABLE_ID, description: 'The reviewer; null when feedback closed the item.' },
        resolution: {
          type: 'string',
          enum: ['review', 'feedback'],
          description: '`review`: a reviewer decided; `feedback`: CPI feedback on the trace closed the item.',
        },
        feedback: ref('ReviewFeedbackClosure'),
      },
      [
        'reviewItemId',
        'traceId',
        'agentId',
        'decision',
        'status',
        'traceStatus',
        'notes',
        'decidedBy',
      ].concat('decidedAt', 'resolution'),
    ),
    ReviewFeedbackClosure: object(
      {
        action: { type: 'string', enum: feedbackAction },
        apiKeyId: { ...NULLABLE_ID, description: 'The workspace key that sent the feedback.' },
        userEmail: { type: ['string', 'null'], description: 'The person the feedback names.' },
        auditEntryId: { ...ID, description: 'The feedback’s audit entry (cpi.approved or cpi.corrected).' },
      },
      undefined,
      { description: 'With `resolution: feedback` only: the feedback that closed the item.' },
    ),
    ReviewEscalatedEventData: object({
      ...reviewFields,
      decision: { type: 'string', enum: ['escalate'] },
      status: { type: 'string', enum: ['escalated'] },
      traceStatus: { type: 'string', enum: ['flagged'], description: 'The trace stays flagged.' },
      decidedBy: { ...NULLABLE_ID, description: 'Who escalated it.' },
      resolution: { type: 'null' },
    }),
    // libs/compliance/src/fria/fria.service.ts (transition to approved).
    FriaApprovedEventData: object({
      id: { ...ID, description: 'The assessment.' },
      systemName: { type: 'string' },
      chainHash: { type: ['string', 'null'], description: 'The hash of the approved contents.' },
      approvedBy: { ...NULLABLE_ID, description: 'The approver.' },
      approvedAt: { type: ['string', 'null'], format: 'date-time' },
    }),
    // libs/compliance/src/mapping/compliance-mapping.service.ts (update).
    ComplianceMappingUpdatedEventData: object({
      framework: { type: 'string', enum: framework },
      clauseId: { type: 'string' },
      status: { type: 'string', enum: clauseStatus },
      coverage: ref('CoverageDto'),
    }),
    // libs/governance/src/cpi/cpi-ingest.service.ts (ingest).
    CpiFeedbackEventData: object({
      traceId: ID,
      agentId: ID,
      action: { type: 'string', enum: feedbackAction },
      humanOverride: { type: 'boolean', description: 'Whether a human’s decision replaced the agent’s.' },
      userEmail: { type: ['string', 'null'], description: 'The person the feedback names.' },
    }),
    // libs/compliance/src/alerts/alert-evaluator.job.ts (evaluate).
    AlertTransitionEventData: object({
      alertId: ID,
      name: { type: 'string' },
      metric: { type: 'string', enum: metric },
      agentId: { ...NULLABLE_ID, description: 'The agent the rule watches; null: every agent.' },
      comparison: { type: 'string', enum: comparison },
      threshold: { type: 'number' },
      windowMinutes: { type: 'integer' },
      value: { type: 'number', description: 'The metric’s value that moved the rule.' },
      unit: { type: 'string', enum: ['share', 'count'], description: '`share` for the rates (0 to 1).' },
      state: { type: 'string', enum: ['firing', 'ok'], description: 'The rule’s state now.' },
      previousState: { type: 'string', enum: ['firing', 'ok'] },
      at: DATE_TIME,
    }),
    // libs/governance/src/webhooks/webhooks.service.ts (test).
    WebhookTestEventData: object({
      webhookId: ID,
      message: { type: 'string', example: 'A test event from the governance service' },
    }),
  };
}

/** Every event the service publishes (libs/governance/src/webhooks/webhook-events.ts), with its data. */
const EVENT_DOCS: readonly EventDoc[] = [
  {
    type: 'trace.approved',
    name: 'TraceApprovedEvent',
    summary: 'A trace was approved at ingestion (by policies, or by a signed-off approval pattern)',
    data: ref('TraceEventData'),
  },
  {
    type: 'trace.flagged',
    name: 'TraceFlaggedEvent',
    summary: 'A trace was flagged for human review (it has a pending review item)',
    data: ref('TraceEventData'),
  },
  {
    type: 'trace.blocked',
    name: 'TraceBlockedEvent',
    summary: 'A trace was blocked by a policy',
    data: ref('TraceEventData'),
  },
  {
    type: 'review.completed',
    name: 'ReviewCompletedEvent',
    summary: 'A review item was approved or rejected, by a reviewer or by feedback on its trace',
    data: ref('ReviewCompletedEventData'),
  },
  {
    type: 'review.escalated',
    name: 'ReviewEscalatedEvent',
    summary: 'A review item was escalated to owners and admins',
    data: ref('ReviewEscalatedEventData'),
  },
  {
    type: 'fria.approved',
    name: 'FriaApprovedEvent',
    summary: 'A fundamental-rights impact assessment was approved',
    data: ref('FriaApprovedEventData'),
  },
  {
    type: 'compliance.mapping.updated',
    name: 'ComplianceMappingUpdatedEvent',
    summary: 'A clause of a compliance mapping changed',
    data: ref('ComplianceMappingUpdatedEventData'),
  },
  {
    type: 'cpi.approved',
    name: 'CpiApprovedEvent',
    summary: 'Human feedback approved a trace’s decision',
    data: ref('CpiFeedbackEventData'),
  },
  {
    type: 'cpi.corrected',
    name: 'CpiCorrectedEvent',
    summary: 'Human feedback corrected a trace’s decision',
    data: ref('CpiFeedbackEventData'),
  },
  {
    type: 'alert.triggered',
    name: 'AlertTriggeredEvent',
    summary: 'An alert rule started firing',
    data: ref('AlertTransitionEventData'),
  },
  {
    type: 'alert.resolved',
    name: 'AlertResolvedEvent',
    summary: 'A firing alert rule went back to ok',
    data: ref('AlertTransitionEventData'),
  },
  {
    type: 'audit.checkpoint',
    name: 'AuditCheckpointEvent',
    summary: 'A signed checkpoint of the audit chain was made',
    data: ref('AuditCheckpointDto'),
  },
  {
    type: 'webhook.test',
    name: 'WebhookTestEvent',
    summary: 'A test delivery asked for with POST /webhooks/{id}/test (sent to that webhook only)',
    data: ref('WebhookTestEventData'),
  },
];

/** The event names the document describes, in the order of webhook-events.ts. */
export const DOCUMENTED_EVENT_TYPES: readonly string[] = EVENT_DOCS.map((e) => e.type);

/** The operationId of an event's webhook: `trace.flagged` → `traceFlaggedWebhook`. */
export const webhookOperationId = (type: string): string =>
  `${type.replace(/\.([a-z])/g, (_, c: string) => c.toUpperCase())}Webhook`;

function eventSchema(event: EventDoc): Schema {
  return object(
    {
      id: {
        ...ID,
        description:
          'The event id, in WebSocket messages; a webhook carries it in its `webhook-id` header, an SSE frame in ' +
          'its `id:` line. Deduplicate on it (delivery is at least once); `lastEventId` resumes after it.',
      },
      type: { type: 'string', enum: [event.type] },
      timestamp: { ...DATE_TIME, description: 'When the event happened.' },
      data: event.data,
    },
    ['type', 'timestamp', 'data'],
    { description: `\`${event.type}\`: ${event.summary}.` },
  );
}

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header' as const,
    required: true,
    description: 'The event id: the same on every retry, so receivers deduplicate on it.',
    schema: ID,
  },
  {
    name: 'webhook-timestamp',
    in: 'header' as const,
    required: true,
    description: 'Seconds since the epoch when this attempt was signed.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header' as const,
    required: true,
    description:
      'Standard Webhooks signatures, space-separated (`v1,<base64 HMAC-SHA256>`): of ' +
      '`<webhook-id>.<webhook-timestamp>.<body>` with the webhook’s secret, and with the previous secret too while ' +
      'a rotation’s grace period runs.',
    schema: { type: 'string' },
  },
];

const WEBHOOK_RESPONSES = {
  '200': { description: 'Any 2xx status within 10 seconds acknowledges the delivery.' },
  '410': {
    description:
      'Gone: the delivery ends there and the webhook is disabled (it receives nothing until enabled again).',
  },
  '429': {
    description:
      'Retried after `Retry-After` (at most 6 hours), as is 503; any other answer, or none within 10 seconds, is ' +
      'retried with backoff (6 attempts in all).',
  },
};

/**
 * The events as named schemas (`TraceFlaggedEvent`, …, their union `GovernanceEvent` discriminated by `type`), and
 * the OpenAPI 3.1 `webhooks`: one signed POST per event type, as a webhook subscribed to it receives it.
 */
export function withEvents(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  const add = (name: string, schema: Schema) => {
    if (schemas[name]) throw new Error(`The event schema ${name} would replace a schema of the same name`);
    schemas[name] = schema;
  };
  for (const [name, schema] of Object.entries(dataSchemas(document))) add(name, schema);
  for (const event of EVENT_DOCS) add(event.name, eventSchema(event));
  add('GovernanceEvent', {
    description:
      'Any event the service sends to webhooks and to the live stream (`GET /events/stream`, `/events/ws`); ' +
      '`type` says which.',
    oneOf: EVENT_DOCS.map((e) => ref(e.name)),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(EVENT_DOCS.map((e) => [e.type, `#/components/schemas/${e.name}`])),
    },
  });
  // The event names, as the webhooks' DTOs declare them from WEBHOOK_EVENTS: each must be described here.
  const names = (schemas.GovernanceEventType as { enum?: string[] } | undefined)?.enum ?? [];
  const undescribed = names.filter((type) => !DOCUMENTED_EVENT_TYPES.includes(type));
  const unknown = DOCUMENTED_EVENT_TYPES.filter((type) => !names.includes(type));
  if (undescribed.length > 0 || unknown.length > 0 || names.length === 0) {
    throw new Error(
      `The events of openapi-events.ts differ from GovernanceEventType (WEBHOOK_EVENTS): undescribed ` +
        `${undescribed.join(', ') || 'none'}, unknown ${unknown.join(', ') || 'none'}`,
    );
  }
  schemas.GovernanceEventType = {
    ...schemas.GovernanceEventType,
    description: 'The name of an event: what a webhook subscribes to, the `type` of the event.',
  };
  // The SSE stream's frames carry the same events (their `data:` line, the id in `id:`).
  const sse = (
    document.paths['/api/v1/events/stream']?.get?.responses?.['200'] as
      { content?: Record<string, { schema?: Schema }> } | undefined
  )?.content?.['text/event-stream'];
  if (sse?.schema) {
    sse.schema = {
      ...sse.schema,
      description:
        'Server-sent events: `id:` the event id, `event:` its type, `data:` the event as one line of JSON, a ' +
        '`GovernanceEvent` without `id`.',
    };
  }
  (document as OpenAPIObject & { webhooks?: Record<string, unknown> }).webhooks = Object.fromEntries(
    EVENT_DOCS.map((event) => [
      event.type,
      {
        post: {
          operationId: webhookOperationId(event.type),
          tags: ['Webhooks'],
          summary: event.summary,
          description:
            `Sent to each active webhook subscribed to \`${event.type}\` (and matching its \`filterAgentId\`), ` +
            'signed per Standard Webhooks. Delivery is at least once: deduplicate on `webhook-id`.',
          security: [],
          parameters: SIGNATURE_HEADERS,
          requestBody: { required: true, content: { 'application/json': { schema: ref(event.name) } } },
          responses: WEBHOOK_RESPONSES,
        },
      },
    ]),
  );
  return document;
}
