import { Inject, Injectable, type LoggerService } from '@nestjs/common';
import type pino from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { createRootLogger } from './logging.js';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's logger, written as JSON by pino (`createRootLogger`). Nest passes the context (the class name given to
 * `new Logger(...)`) as the last parameter; it becomes the line's `context`. An object message is merged into the
 * line (an Error becomes `err`), and the parameters before the context are pino's message and its arguments.
 */
@Injectable()
export class AppLogger implements LoggerService {
  readonly pino: pino.Logger;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.pino = createRootLogger(config);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {};
    let rest = params;
    if (params.length > 0) {
      line.context = params[params.length - 1];
      rest = params.slice(0, -1);
    }
    if (message instanceof Error) {
      line.err = message;
      this.pino[level](line, ...(rest as [string?]));
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(line, message);
      this.pino[level](line, ...(rest as [string?]));
    } else if (
      level === 'error' &&
      rest.length === 1 &&
      typeof rest[0] === 'string' &&
      rest[0].includes('\n')
    ) {
      // Nest's own exception handlers call error(message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      this.pino.error({ ...line, err });
    } else {
      this.pino[level](line, String(message), ...(rest as []));
    }
  }
}
