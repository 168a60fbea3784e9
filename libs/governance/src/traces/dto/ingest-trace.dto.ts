import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PII_ENTITIES } from '../../pii/index.js';

/*
 * OpenAPI models of POST /traces. The body is validated by validateTraceIngest against the limits of the
 * schema version in force (they can differ between versions), not by class-validator. Optional fields may be sent
 * as null, which means the same as leaving them out (stored traces never hold both shapes).
 */
const ABSENT = { nullable: true } as const;

export class ToolCallDto {
  @ApiProperty({ maxLength: 200, example: 'lookup_order' }) name: string;
  @ApiPropertyOptional({
    description: 'Arguments as the agent passed them (any JSON).',
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
    ],
  })
  arguments?: unknown;
}

export class InputContextDto {
  @ApiProperty({
    maxLength: 50_000,
    description: 'Input the agent received (schema 2026-04-11: ≤ 50,000 chars).',
  })
  prompt: string;
  @ApiPropertyOptional({ type: String, maxLength: 50_000, ...ABSENT }) systemPrompt?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Context the agent saw; ≤ 100 KiB as UTF-8 JSON (schema 2026-04-11).',
    ...ABSENT,
  })
  context?: Record<string, unknown>;
  @ApiPropertyOptional({ type: String, maxLength: 256, ...ABSENT }) conversationId?: string;
}

export class OutputDecisionDto {
  @ApiProperty({
    maxLength: 200,
    example: 'llm_response',
    description: 'Action type, e.g. llm_response, tool_call.',
  })
  action: string;
  @ApiProperty({ description: 'Agent output text (may be empty).' }) text: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: '≤ 10 KiB as UTF-8 JSON (schema 2026-04-11).',
    ...ABSENT,
  })
  actionObject?: Record<string, unknown>;
  @ApiPropertyOptional({ type: String, maxLength: 50_000, ...ABSENT }) rationale?: string;
  @ApiPropertyOptional({ type: 'array', items: {}, maxItems: 10, ...ABSENT }) alternatives?: unknown[];
  @ApiPropertyOptional({ type: [ToolCallDto], maxItems: 50, ...ABSENT }) toolCalls?: ToolCallDto[];
}

export class IngestTraceDto {
  @ApiProperty({ type: InputContextDto }) inputContext: InputContextDto;
  @ApiProperty({ type: OutputDecisionDto }) outputDecision: OutputDecisionDto;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, ...ABSENT }) metadata?: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({
    description:
      'Agent of the trace. With an agent key it must be the key’s own agent (else 403); with a workspace key it is required and must lie in the key’s scope.',
    type: String,
    ...ABSENT,
  })
  agentId?: string;
  @ApiPropertyOptional({
    minimum: 0,
    maximum: 1,
    description: 'Override; when absent the service estimates it from the output text before policies run.',
    type: Number,
    ...ABSENT,
  })
  confidence?: number;
  @ApiPropertyOptional({ type: String, maxLength: 50_000, ...ABSENT }) rationale?: string;
  @ApiPropertyOptional({
    description:
      'Your own opaque reference of the person the decision is about (a customer or account id), 1–200 characters. ' +
      'Stored only as an HMAC under the organization’s subject key and never returned (traces show `hasSubject`); ' +
      'it is how GET /subjects/{ref}/decisions, the erasure and legal holds find the decisions. OTLP: the span ' +
      'attribute `governance.subject.ref`.',
    type: String,
    minLength: 1,
    maxLength: 200,
    ...ABSENT,
  })
  subjectRef?: string;
}

export class IngestResultDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['approved', 'flagged', 'blocked'] }) status: string;
  @ApiProperty({ minimum: 0, maximum: 1 }) confidence: number;
  @ApiProperty() message: string;
}

export class FlaggedResultDto extends IngestResultDto {
  @ApiProperty({ description: 'The pending review item created for the trace.' }) reviewItemId: string;
}

export class PolicyResultDto {
  @ApiProperty() policyId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['block', 'flag'] }) outcome: string;
  @ApiPropertyOptional({
    enum: PII_ENTITIES,
    isArray: true,
    description:
      'The PII types its containsPii conditions found in the trace: types only, never the values. Absent when none did.',
  })
  piiEntities?: string[];
}

export class BlockedResultDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['blocked'] }) status: string;
  @ApiProperty() confidence: number;
  @ApiProperty({ type: [PolicyResultDto], description: 'The policies that matched.' })
  policies: PolicyResultDto[];
}

export class FlaggedEnvelopeDto {
  @ApiProperty({ enum: [true] }) success: true;
  @ApiProperty({ enum: ['SVC_FLAGGED_FOR_REVIEW'] }) code: string;
  @ApiProperty({ type: FlaggedResultDto }) data: FlaggedResultDto;
}

export class BlockedEnvelopeDto {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ enum: ['SVC_BLOCKED_BY_POLICY'] }) code: string;
  @ApiProperty() error: string;
  @ApiProperty({ type: BlockedResultDto }) data: BlockedResultDto;
}

export class DuplicateDataDto {
  @ApiProperty({ description: 'Id of the trace created by the first request with this key.' }) id: string;
}

export class DuplicateEnvelopeDto {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ enum: ['SVC_DUPLICATE_REQUEST'] }) code: string;
  @ApiProperty() error: string;
  @ApiProperty({ type: DuplicateDataDto }) data: DuplicateDataDto;
}
