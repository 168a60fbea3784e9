import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { IfPresent, PaginationQueryDto } from '#platform';
import type {
  AlertComparison,
  AlertMetric,
  AlertRuleRow,
  AlertState,
  AlertTransitionRow,
} from '../alert.schema.js';

export const ALERT_METRICS: readonly AlertMetric[] = [
  'block_rate',
  'flag_rate',
  'low_confidence_rate',
  'trace_volume',
  'review_backlog',
  'overdue_incidents',
];
export const ALERT_COMPARISONS: readonly AlertComparison[] = ['gt', 'lt'];
export const ALERT_STATES: readonly AlertState[] = ['ok', 'firing'];
export const WINDOW_MINUTES_MIN = 5;
export const WINDOW_MINUTES_MAX = 10_080;
/** Integrations one rule notifies at most. */
export const ALERT_INTEGRATIONS_MAX = 10;
/** A count threshold is at most this. */
export const COUNT_THRESHOLD_MAX = 1_000_000_000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const METRIC_DOC =
  '`block_rate`, `flag_rate`, `low_confidence_rate` (confidence below 0.5): shares of the traces created in the ' +
  'window, from 0 to 1 (no trace in the window: not measured, the state stays); `trace_volume`: traces created ' +
  'in the window; `review_backlog`: review items awaiting a decision now; `overdue_incidents`: open incidents past ' +
  'their deadline now.';
const THRESHOLD_DOC = 'A rate metric: 0 to 1. A count metric: 0 to 1,000,000,000.';
const INTEGRATIONS_DOC = `Integrations of the organization notified on each transition, at most ${ALERT_INTEGRATIONS_MAX}.`;

export class CreateAlertDto {
  @ApiProperty({ minLength: 1, maxLength: 120, description: 'Trimmed.' })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name: string;

  @ApiProperty({ enum: ALERT_METRICS, description: METRIC_DOC })
  @IsIn(ALERT_METRICS, { message: `metric must be one of ${ALERT_METRICS.join(', ')}` })
  metric: AlertMetric;

  @ApiPropertyOptional({ description: 'Only this agent’s traces, review items or incidents; absent: all.' })
  @IfPresent()
  @IsString()
  @MaxLength(64)
  agentId?: string;

  @ApiProperty({
    enum: ALERT_COMPARISONS,
    description: 'Fires while the value is greater (gt) or less (lt).',
  })
  @IsIn(ALERT_COMPARISONS, { message: 'comparison must be gt or lt' })
  comparison: AlertComparison;

  @ApiProperty({ minimum: 0, maximum: COUNT_THRESHOLD_MAX, description: THRESHOLD_DOC })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'threshold must be a number' })
  @Min(0)
  @Max(COUNT_THRESHOLD_MAX)
  threshold: number;

  @ApiProperty({
    minimum: WINDOW_MINUTES_MIN,
    maximum: WINDOW_MINUTES_MAX,
    description: 'The window, in minutes.',
  })
  @IsInt({ message: 'windowMinutes must be a whole number of minutes' })
  @Min(WINDOW_MINUTES_MIN)
  @Max(WINDOW_MINUTES_MAX)
  windowMinutes: number;

  @ApiPropertyOptional({ type: [String], maxItems: ALERT_INTEGRATIONS_MAX, description: INTEGRATIONS_DOC })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(ALERT_INTEGRATIONS_MAX)
  @ArrayUnique({ message: 'integrationIds must not repeat an id' })
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  integrationIds?: string[];

  @ApiPropertyOptional({ default: true })
  @IfPresent()
  @IsBoolean()
  isActive?: boolean;
}

export class UpdateAlertDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 120 })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name?: string;

  @ApiPropertyOptional({ enum: ALERT_METRICS })
  @IfPresent()
  @IsIn(ALERT_METRICS, { message: `metric must be one of ${ALERT_METRICS.join(', ')}` })
  metric?: AlertMetric;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'null: every agent.' })
  @ValidateIf((_o, value) => value !== null && value !== undefined)
  @IsString()
  @MaxLength(64)
  agentId?: string | null;

  @ApiPropertyOptional({ enum: ALERT_COMPARISONS })
  @IfPresent()
  @IsIn(ALERT_COMPARISONS, { message: 'comparison must be gt or lt' })
  comparison?: AlertComparison;

  @ApiPropertyOptional({ minimum: 0, maximum: COUNT_THRESHOLD_MAX, description: THRESHOLD_DOC })
  @IfPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'threshold must be a number' })
  @Min(0)
  @Max(COUNT_THRESHOLD_MAX)
  threshold?: number;

  @ApiPropertyOptional({ minimum: WINDOW_MINUTES_MIN, maximum: WINDOW_MINUTES_MAX })
  @IfPresent()
  @IsInt({ message: 'windowMinutes must be a whole number of minutes' })
  @Min(WINDOW_MINUTES_MIN)
  @Max(WINDOW_MINUTES_MAX)
  windowMinutes?: number;

  @ApiPropertyOptional({
    type: [String],
    maxItems: ALERT_INTEGRATIONS_MAX,
    description: `Replaces them. ${INTEGRATIONS_DOC}`,
  })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(ALERT_INTEGRATIONS_MAX)
  @ArrayUnique({ message: 'integrationIds must not repeat an id' })
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  integrationIds?: string[];

  @ApiPropertyOptional({
    description: 'false: not evaluated, and its state goes back to ok without a notification.',
  })
  @IfPresent()
  @IsBoolean()
  isActive?: boolean;
}

export class ListAlertsQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: ALERT_STATES })
  @IsOptional()
  @IsIn(ALERT_STATES, { message: 'state must be ok or firing' })
  state?: AlertState;

  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'isActive must be true or false' })
  isActive?: 'true' | 'false';
}

export class AlertHistoryQueryDto extends PaginationQueryDto {}

export class AlertDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ALERT_METRICS }) metric: AlertMetric;
  @ApiProperty({ type: String, nullable: true }) agentId: string | null;
  @ApiProperty({ enum: ALERT_COMPARISONS }) comparison: AlertComparison;
  @ApiProperty() threshold: number;
  @ApiProperty() windowMinutes: number;
  @ApiProperty({ type: [String] }) integrationIds: string[];
  @ApiProperty() isActive: boolean;
  @ApiProperty({ enum: ALERT_STATES }) state: AlertState;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastTriggeredAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastEvaluatedAt: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'The value at the last evaluation; null before the first, or for a rate over a window without traces.',
  })
  lastValue: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the creator.' }) createdBy:
    string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class AlertTransitionDto {
  @ApiProperty() id: string;
  @ApiProperty() alertId: string;
  @ApiProperty({ description: 'The rule’s name at the time.' }) alertName: string;
  @ApiProperty({ enum: ALERT_STATES }) from: AlertState;
  @ApiProperty({ enum: ALERT_STATES }) to: AlertState;
  @ApiProperty({ enum: ALERT_METRICS }) metric: AlertMetric;
  @ApiProperty({ type: String, nullable: true }) agentId: string | null;
  @ApiProperty({ enum: ALERT_COMPARISONS }) comparison: AlertComparison;
  @ApiProperty() threshold: number;
  @ApiProperty() windowMinutes: number;
  @ApiProperty({ description: 'The value measured.' }) value: number;
  @ApiProperty({ description: 'Integrations notified.' }) notified: number;
  @ApiProperty({ format: 'date-time' }) at: string;
}

export class AlertDeletedDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toAlertResponse(row: AlertRuleRow): AlertDto {
  return {
    id: row.id,
    name: row.name,
    metric: row.metric,
    agentId: row.agentId,
    comparison: row.comparison,
    threshold: row.threshold,
    windowMinutes: row.windowMinutes,
    integrationIds: row.integrationIds,
    isActive: row.isActive,
    state: row.state,
    lastTriggeredAt: iso(row.lastTriggeredAt),
    lastEvaluatedAt: iso(row.lastEvaluatedAt),
    lastValue: row.lastValue,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toTransitionResponse(row: AlertTransitionRow): AlertTransitionDto {
  return {
    id: row.id,
    alertId: row.alertId,
    alertName: row.alertName,
    from: row.fromState,
    to: row.toState,
    metric: row.metric,
    agentId: row.agentId,
    comparison: row.comparison,
    threshold: row.threshold,
    windowMinutes: row.windowMinutes,
    value: row.value,
    notified: row.notified,
    at: row.createdAt.toISOString(),
  };
}
