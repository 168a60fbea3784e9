import { Controller, Get, HttpCode, Inject } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { sql } from 'drizzle-orm';
import { Clock } from '../clock/clock.js';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import { AppError, ErrorCode } from '../http/app-error.js';
import { ApiEnvelope, ApiErrors } from '../http/openapi.js';
import { VersioningService } from '../http/versioning.js';
import { Public } from '../security/access.decorator.js';

class HealthChecksDto {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
}

class HealthDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ description: 'Seconds since the process started.' }) uptime: number;
  @ApiProperty({ type: HealthChecksDto }) checks: HealthChecksDto;
}

class VersionLimitsDto {
  @ApiProperty({
    example: {
      maxPromptLength: 50000,
      maxSystemPromptLength: 50000,
      maxContextBytes: 102400,
      maxConversationIdLength: 256,
    },
  })
  inputContext: Record<string, number>;
  @ApiProperty({
    example: {
      maxActionObjectBytes: 10240,
      maxRationaleLength: 50000,
      maxAlternatives: 10,
      maxToolCalls: 50,
    },
  })
  outputDecision: Record<string, number>;
}

class SchemaVersionDto {
  @ApiProperty({ example: '2026-04-11' }) version: string;
  @ApiProperty({ enum: ['current', 'deprecated'] }) status: string;
  @ApiProperty() recommended: boolean;
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    example: null,
    description: 'ISO date from which the version answers 410.',
  })
  sunset: string | null;
  @ApiProperty({ type: VersionLimitsDto }) limits: VersionLimitsDto;
}

// Long enough not to flap under CPU load, short enough that a hung database answers well before LB timeouts.
const DB_CHECK_TIMEOUT_MS = 250;

@ApiTags('System')
@Controller()
export class SystemController {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    private readonly versioning: VersioningService,
    private readonly clock: Clock,
  ) {}

  @Get('health')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Liveness and database check',
    description:
      'Also served at `/health`. Answers within 100 ms; 503 SERVICE_UNAVAILABLE when the database does not answer in time.',
  })
  @ApiEnvelope(HealthDto)
  @ApiErrors([503], { 503: 'SERVICE_UNAVAILABLE (database check failed)' })
  async health(): Promise<HealthDto> {
    const up = await Promise.race([
      this.database.db.execute(sql`select 1`).then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => setTimeout(resolve, DB_CHECK_TIMEOUT_MS, false).unref()),
    ]);
    if (!up) throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'Database check failed');
    return {
      status: 'ok',
      timestamp: this.clock.now().toISOString(),
      uptime: Math.round(process.uptime()),
      checks: { database: 'up' },
    };
  }

  @Get('versions')
  @Public()
  @ApiOperation({
    summary: 'Schema-version registry',
    description:
      'Versions selectable with the `X-Svc-Version` request header, with status, sunset date and trace limits.',
  })
  @ApiEnvelope(SchemaVersionDto, { isArray: true })
  versions(): readonly SchemaVersionDto[] {
    return this.versioning.list();
  }
}
