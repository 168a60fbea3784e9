import 'reflect-metadata';
import { CommanderError } from 'commander';
import { AppError, keepStringPrototypeFast } from '#platform';
import { buildProgram } from './cli.js';

// As in the API: after the imports (ioredis among them), before any work (audit:verify reads every entry).
keepStringPrototypeFast();

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    const message =
      err instanceof AppError
        ? `${err.code}: ${err.message}`
        : err instanceof Error
          ? err.message
          : String(err);
    process.stderr.write(`${message}\n`);
    process.exit(1);
  });
