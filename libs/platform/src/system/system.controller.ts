import { Controller, Get, HttpCode, Inject } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { sql } from 'drizzle-orm';
import { Clock } from '../clock/clock.js';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import { migrationState } from '../db/migrate.js';
import { AppError, ErrorCode } from '../http/app-error.js';
import { Endpoint } from '../http/endpoint.js';
import { VersioningService } from '../http/versioning.js';
import {
  EVENT_LOOP_SETTLING_MS,
  type EventLoopCheck,
  EventLoopMonitor,
  SLOW_EVENT_LOOP_MS,
} from './event-loop.monitor.js';
import { Readiness } from './readiness.js';
import { SYSTEM_DOCS as DOCS, SYSTEM_ERRORS as ERRORS } from './system.docs.js';

class HealthChecksDto {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
  @ApiProperty({
    enum: ['starting', 'ok', 'slow'],
    description:
      `\`slow\` when the event loop ran more than ${SLOW_EVENT_LOOP_MS} ms late in the last 10 s (CPU-bound work). ` +
      `\`starting\` until ${EVENT_LOOP_SETTLING_MS / 1000} s after the service began listening: the delay is ` +
      'measured from then (start-up, such as migrations, is not load) and not judged while the service settles.',
  })
  eventLoop: EventLoopCheck;
  @ApiProperty({
    description:
      'The longest event-loop delay in the last 10 s, in milliseconds, counted from when the service began listening.',
  })
  eventLoopDelayMs: number;
}

class HealthDto {
  @ApiProperty({
    enum: ['ok'],
    description: '`ok` whenever the database answers; see `checks` for the details.',
  })
  status: 'ok';
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ description: 'Seconds since the process started.' }) uptime: number;
  @ApiProperty({ type: HealthChecksDto }) checks: HealthChecksDto;
}

class LivenessDto {
  @ApiProperty({ enum: ['ok'], description: 'Always `ok`: the process answers. Nothing else is checked.' })
  status: 'ok';
  @ApiProperty({ description: 'Seconds since the process started.' }) uptime: number;
}

class ReadinessChecksDto {
  @ApiProperty({ enum: ['up', 'down'] }) database: 'up' | 'down';
  @ApiProperty({
    enum: ['current', 'pending', 'unknown'],
    description:
      "`current` when the database holds every migration this build knows (or newer ones, a later build's); " +
      '`unknown` when the database did not answer.',
  })
  migrations: 'current' | 'pending' | 'unknown';
  @ApiProperty({
    description: 'True from SIGTERM on: the process finishes what it was sent and takes nothing new.',
  })
  draining: boolean;
}

class ReadinessDto {
  @ApiProperty({ enum: ['ready'] }) status: 'ready';
  @ApiProperty({ type: ReadinessChecksDto }) checks: ReadinessChecksDto;
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
const CHECK_TICK_MS = 10;

/**
 * Whether the query answers within `budgetMs` of the database's time rather than the event loop's. The wait
 * advances in 10 ms ticks, each followed by a turn for pending I/O; a tick that runs late (the loop was held up
 * by other work, or the process was not scheduled) counts for at most two ticks. So a stalled loop does not use up
 * the database's budget, and an answer waiting unread in the socket is read before the check gives up.
 */
export async function answersWithin(query: Promise<unknown>, budgetMs: number): Promise<boolean> {
  let answered: boolean | undefined;
  const settled = query.then(
    () => (answered = true),
    () => (answered = false),
  );
  let spent = 0;
  let last = performance.now();
  while (answered === undefined && spent < budgetMs) {
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, CHECK_TICK_MS).unref())]);
    if (answered === undefined) await new Promise((resolve) => setImmediate(resolve));
    const now = performance.now();
    spent += Math.min(now - last, 2 * CHECK_TICK_MS);
    last = now;
  }
  return answered === true;
}

@ApiTags('System')
@Controller()
export class SystemController {
  constructor(
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    private readonly versioning: VersioningService,
    private readonly clock: Clock,
    private readonly eventLoop: EventLoopMonitor,
    private readonly readiness: Readiness,
  ) {}

  @Get('health')
  @HttpCode(200)
  @Endpoint({
    summary: 'Liveness, database and event-loop checks',
    description: DOCS.health,
    access: 'public',
    success: HealthDto,
    errors: [503],
    errorCodes: ERRORS.health,
  })
  async health(): Promise<HealthDto> {
    const up = await answersWithin(this.database.db.execute(sql`select 1`), DB_CHECK_TIMEOUT_MS);
    const { eventLoop, eventLoopDelayMs } = this.eventLoop.check();
    if (!up) {
      // The probe's answer (asked every few seconds, through an outage), not a failure of this request: not logged.
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'Database check failed', {
        extra: { checks: { database: 'down', eventLoop, eventLoopDelayMs } },
        headers: { 'Retry-After': '1' },
        logged: false,
      });
    }
    return {
      status: 'ok',
      timestamp: this.clock.now().toISOString(),
      uptime: Math.round(process.uptime()),
      checks: { database: 'up', eventLoop, eventLoopDelayMs },
    };
  }

  @Get('health/live')
  @HttpCode(200)
  @Endpoint({
    summary: 'Liveness: the process answers',
    description: DOCS.live,
    access: 'public',
    success: LivenessDto,
  })
  live(): LivenessDto {
    return { status: 'ok', uptime: Math.round(process.uptime()) };
  }

  @Get('health/ready')
  @HttpCode(200)
  @Endpoint({
    summary: 'Readiness: database reachable, migrations current, not draining',
    description: DOCS.ready,
    access: 'public',
    success: ReadinessDto,
    errors: [503],
    errorCodes: ERRORS.ready,
  })
  async ready(): Promise<ReadinessDto> {
    const draining = this.readiness.draining;
    let state: 'current' | 'pending' | undefined;
    const answered = await answersWithin(
      migrationState(this.database.db).then((s) => (state = s)),
      DB_CHECK_TIMEOUT_MS,
    );
    const checks: ReadinessChecksDto = {
      database: answered ? 'up' : 'down',
      migrations: answered && state ? state : 'unknown',
      draining,
    };
    if (!answered || checks.migrations !== 'current' || draining) {
      const reason = draining
        ? 'The process is draining before it stops'
        : !answered
          ? 'Database check failed'
          : 'Migrations are pending';
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, reason, {
        extra: { checks },
        headers: { 'Retry-After': '1' },
        logged: false,
      });
    }
    return { status: 'ready', checks };
  }

  @Get('versions')
  @Endpoint({
    summary: 'Schema-version registry',
    description: DOCS.versions,
    access: 'public',
    success: { model: SchemaVersionDto, isArray: true },
  })
  versions(): readonly SchemaVersionDto[] {
    return this.versioning.list();
  }
}
