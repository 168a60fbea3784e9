import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ROLES, type Role } from '#platform';
import { explainPolicyMatch } from '../policy-sentence.js';
import type { ExplanationFacts } from '../explanation-facts.js';

export const EXPLANATION_FORMATS = ['json', 'pdf'] as const;
export type ExplanationFormat = (typeof EXPLANATION_FORMATS)[number];

export class ExplanationQueryDto {
  @ApiPropertyOptional({
    enum: EXPLANATION_FORMATS,
    default: 'json',
    description:
      '`pdf`: the explanation as a PDF written for the person concerned, instead of the JSON envelope.',
  })
  @IsOptional()
  @IsIn(EXPLANATION_FORMATS, { message: `format must be one of ${EXPLANATION_FORMATS.join(', ')}` })
  format?: ExplanationFormat;
}

export class ExplanationAgentDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: String, nullable: true, description: 'null once the agent was deleted.' })
  name: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The agent’s stated purpose, as its description records it; null when none was given.',
  })
  description: string | null;
}

export class ExplanationDecisionDto {
  @ApiProperty({
    enum: ['approved', 'flagged', 'blocked', 'success'],
    description: 'The trace’s status now (`success`: settled by human feedback after the decision).',
  })
  status: string;
  @ApiProperty({ description: 'The agent’s confidence in its decision, 0 to 1.' }) confidence: number;
  @ApiProperty({ format: 'date-time', description: 'When the decision was recorded.' }) madeAt: string;
}

export class ExplanationPolicyDto {
  @ApiProperty() policyId: string;
  @ApiProperty({ description: 'The policy’s name when it matched.' }) name: string;
  @ApiProperty({ enum: ['block', 'flag'] }) outcome: 'block' | 'flag';
  @ApiProperty({
    description:
      'The policy’s conditions in plain English ("The output contained an e-mail address."), from its stored ' +
      'conditions; it says so when the policy was edited after the decision, or deleted.',
  })
  explanation: string;
}

export class ExplanationHumanReviewDto {
  @ApiProperty({ enum: ['approved', 'rejected', 'escalated'] }) decision:
    'approved' | 'rejected' | 'escalated';
  @ApiProperty({ format: 'date-time' }) decidedAt: string;
  @ApiProperty({
    enum: ROLES,
    nullable: true,
    description:
      'The reviewer’s role in the organization (never who they are); null when the item was closed by feedback, ' +
      'or the reviewer is no longer a member.',
  })
  reviewerRole: Role | null;
  @ApiProperty({ type: String, nullable: true, description: 'The reviewer’s notes or reason.' })
  notes: string | null;
  @ApiProperty({
    enum: ['review', 'feedback'],
    description:
      '`review`: decided in the review queue; `feedback`: closed by human feedback (POST /cpi/ingest).',
  })
  via: 'review' | 'feedback';
}

export class ExplanationCorrectionDto {
  @ApiProperty({
    enum: ['approve', 'correct'],
    description: '`correct`: a person replaced the decision; `approve`: a person confirmed it.',
  })
  action: 'approve' | 'correct';
  @ApiProperty({ format: 'date-time', description: 'When this feedback was (last) given.' }) at: string;
  @ApiProperty({ type: String, nullable: true, description: 'The agent’s own decision.' })
  originalDecision: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The decision the person set (`correct`).' })
  correctedDecision: string | null;
  @ApiProperty() originalConfidence: number;
  @ApiProperty({ type: Number, nullable: true }) correctedConfidence: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The reason given with the feedback.' })
  notes: string | null;
}

/**
 * The explanation of one decision (EU AI Act art. 86), from stored records only: docs/compliance-officers.md,
 * "Explaining a decision (art. 86)".
 */
export class TraceExplanationDto {
  @ApiProperty() traceId: string;
  @ApiProperty({ type: ExplanationAgentDto }) agent: ExplanationAgentDto;
  @ApiProperty({ type: ExplanationDecisionDto }) decision: ExplanationDecisionDto;
  @ApiProperty({ type: [ExplanationPolicyDto], description: 'The policies that matched, in priority order.' })
  policies: ExplanationPolicyDto[];
  @ApiProperty({
    type: ExplanationHumanReviewDto,
    nullable: true,
    description:
      'The human decision on its review item; null when none was made (not flagged, or still pending).',
  })
  humanReview: ExplanationHumanReviewDto | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The approval pattern that approved the flagged decision automatically, if one did.',
  })
  autoApprovedBy: string | null;
  @ApiProperty({
    type: [ExplanationCorrectionDto],
    description:
      'Human feedback given after the decision (POST /cpi/ingest): its latest verdict, or nothing.',
  })
  corrections: ExplanationCorrectionDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Whom to contest the decision with: the organization’s `contestContact`; null when not set.',
  })
  contact: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the decision’s content was erased; the explanation is then made from what remains.',
  })
  erasedAt: string | null;
}

/** A stored decision (jsonb: a string as the CPI stores it, anything else as its JSON) as text. */
const decisionText = (value: unknown): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);

function humanReviewOf(
  review: ExplanationFacts['review'],
  role: Role | null,
): ExplanationHumanReviewDto | null {
  if (!review || review.status === 'pending' || !review.decidedAt) return null;
  return {
    decision: review.status,
    decidedAt: review.decidedAt.toISOString(),
    reviewerRole: role,
    notes: review.notes,
    // The review module's FEEDBACK_DECISION: the item was closed by feedback rather than by a reviewer.
    via: review.decision === 'feedback' ? 'feedback' : 'review',
  };
}

export function toTraceExplanationResponse(facts: ExplanationFacts): TraceExplanationDto {
  const { trace, feedback } = facts;
  return {
    traceId: trace.id,
    agent: {
      id: trace.agentId,
      name: facts.agent?.name ?? null,
      description: facts.agent?.description ?? null,
    },
    decision: { status: trace.status, confidence: trace.confidence, madeAt: trace.createdAt.toISOString() },
    policies: trace.policyResults.map((result) => ({
      policyId: result.policyId,
      name: result.name,
      outcome: result.outcome,
      explanation: explainPolicyMatch({
        result,
        policy: facts.policies.get(result.policyId),
        decidedAt: trace.createdAt,
      }),
    })),
    humanReview: humanReviewOf(facts.review, facts.reviewerRole),
    autoApprovedBy: facts.autoApprovedBy,
    corrections: feedback
      ? [
          {
            action: feedback.action,
            at: feedback.lastAt.toISOString(),
            originalDecision: decisionText(feedback.originalDecision),
            correctedDecision: decisionText(feedback.correctedDecision),
            originalConfidence: feedback.originalConfidence,
            correctedConfidence: feedback.correctedConfidence,
            notes: feedback.notes,
          },
        ]
      : [],
    contact: facts.contact,
    erasedAt: trace.erasedAt?.toISOString() ?? null,
  };
}
