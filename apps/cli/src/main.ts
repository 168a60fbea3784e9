import 'reflect-metadata';
import { CommanderError } from 'commander';
import { AppError } from '#platform';
import { buildProgram } from './cli.js';

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
