import { Logger } from '@nestjs/common';
import pino from 'pino';
import { AppLogger } from '#platform';
import type { TestContext } from './app.js';

/** What a capture collected: each line exactly as the process would have written it. */
export interface CapturedLogs {
  readonly lines: string[];
  /** Every captured line, joined. */
  text(): string;
  /** Puts back the logger's level, its destination and Nest's logger; idempotent. */
  stop(): void;
}

type Loggers = { staticInstanceRef?: unknown };

/**
 * Captures every log line the application writes from now on, serialized as pino would write it (redaction applied),
 * at `level` (default `trace`, the most verbose): the request lines, the service's own pino calls and, routed through
 * AppLogger, every Nest `Logger` of the application (a test application is created with `logger: false`). A search
 * for a planted value in `text()` then reads what an operator's log store would hold.
 */
export function captureLogs(ctx: TestContext, level: pino.LevelWithSilent = 'trace'): CapturedLogs {
  const appLogger = ctx.service(AppLogger);
  const logger = appLogger.pino as pino.Logger & Record<symbol, unknown>;
  const lines: string[] = [];
  const before = {
    level: logger.level,
    stream: logger[pino.symbols.streamSym],
    nest: (Logger as unknown as Loggers).staticInstanceRef,
  };
  logger[pino.symbols.streamSym] = { write: (line: string) => void lines.push(line) };
  logger.level = level;
  Logger.overrideLogger(appLogger);
  let stopped = false;
  return {
    lines,
    text: () => lines.join(''),
    stop() {
      if (stopped) return;
      stopped = true;
      logger[pino.symbols.streamSym] = before.stream;
      logger.level = before.level;
      // The worker shares its module graph with other files: Nest's logger goes back to what it was.
      (Logger as unknown as Loggers).staticInstanceRef = before.nest;
    },
  };
}
