import 'reflect-metadata';
import { createReadStream, createWriteStream, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../../api/src/app.module.js';
import { createHttpApp } from '../../api/src/bootstrap.js';
import { buildOpenApiDocument } from '../../api/src/openapi.js';
import {
  createDatabaseHandle,
  ExportedChainVerifier,
  loadConfig,
  MailService,
  PLANS,
  type Plan,
  renderConfigurationReference,
  runMigrations,
} from '#platform';
import { OrganizationExportService, OrganizationsService } from '#identity';
import { AuditCheckpointsService, AuditService } from '#governance';

export type ContextRunner = <T>(fn: (app: INestApplicationContext) => Promise<T>) => Promise<T>;

/** Boots the application modules without HTTP for one command, then closes them. */
export const bootContext: ContextRunner = async (fn) => {
  process.env.WORKERS = 'off';
  // A command is not a process to scrape; its METRICS_PORT is the running service's, which it would collide with.
  delete process.env.METRICS_PORT;
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error'] });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
};

/**
 * Operator commands. Plans change only here: no HTTP route does. `withContext` supplies the application
 * context (tests pass one that reuses their booted application).
 */
export function buildProgram(
  withContext: ContextRunner = bootContext,
  print: (value: unknown) => void = (value) => process.stdout.write(JSON.stringify(value, null, 2) + '\n'),
): Command {
  const program = new Command('governance')
    .description('Governance service operator commands')
    .exitOverride();

  program
    .command('org:list')
    .description('List organizations with their plans')
    .option('--limit <n>', 'page size', '100')
    .option('--offset <n>', 'rows to skip', '0')
    .action(async (opts: { limit: string; offset: string }) => {
      const limit = Math.min(Math.max(Number.parseInt(opts.limit, 10) || 100, 1), 1000);
      const offset = Math.max(Number.parseInt(opts.offset, 10) || 0, 0);
      await withContext(async (app) => print(await app.get(OrganizationsService).list(limit, offset)));
    });

  program
    .command('org:set-plan')
    .description(`Set an organization's plan (${PLANS.join(', ')})`)
    .argument('<orgId>')
    .argument('<plan>')
    .action(async (orgId: string, plan: string) => {
      if (!(PLANS as readonly string[]).includes(plan)) {
        throw new Error(`Unknown plan "${plan}"; expected one of ${PLANS.join(', ')}`);
      }
      await withContext(async (app) =>
        print(await app.get(OrganizationsService).setPlan(orgId, plan as Plan)),
      );
    });

  program
    .command('org:restore')
    .description('Restore a deleted organization within its grace period (ORG_DELETION_GRACE_DAYS)')
    .argument('<orgId>')
    .action(async (orgId: string) => {
      await withContext(async (app) => print(await app.get(OrganizationsService).restore(orgId)));
    });

  program
    .command('org:export')
    .description(
      'Write every record of an organization (deleted or not, until erased) to a file as NDJSON, the audit ' +
        'chain in sequence order',
    )
    .argument('<orgId>')
    .argument('<file>')
    .action(async (orgId: string, file: string) => {
      await withContext(async (app) => {
        // A new file only ('wx'): an existing one is neither overwritten nor, on failure, removed.
        const out = createWriteStream(file, { mode: 0o600, flags: 'wx' });
        await once(out, 'open');
        const counts: Record<string, number> = {};
        try {
          for await (const line of app.get(OrganizationExportService).lines(orgId)) {
            if ('table' in line) counts[line.table] = (counts[line.table] ?? 0) + 1;
            if (!out.write(JSON.stringify(line) + '\n')) await once(out, 'drain');
          }
          out.end();
          await once(out, 'finish');
        } catch (err) {
          out.destroy();
          rmSync(file, { force: true });
          throw err;
        }
        print({ organizationId: orgId, file, records: counts });
      });
    });

  program
    .command('audit:verify-export')
    .description('Verify offline the audit chain inside a file written by org:export (no database needed)')
    .argument('<file>')
    .action(async (file: string) => {
      const verifier = new ExportedChainVerifier();
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
      for await (const line of lines) verifier.push(line);
      const result = verifier.result();
      print(result);
      if (!result.valid) process.exitCode = 2;
    });

  program
    .command('mail:outbox')
    .description('Show recent outbox messages with their text (for deployments without SMTP)')
    .option('--limit <n>', 'how many', '20')
    .action(async (opts: { limit: string }) => {
      const limit = Math.min(Math.max(Number.parseInt(opts.limit, 10) || 20, 1), 200);
      await withContext(async (app) => print(await app.get(MailService).list(limit)));
    });

  program
    .command('audit:verify')
    .description(
      "Verify an organization's audit chain: the entries after the prefix verified last time, or all with --full",
    )
    .argument('<orgId>')
    .option('--full', 'check every entry from the first')
    .action(async (orgId: string, opts: { full?: boolean }) => {
      await withContext(async (app) => {
        const result = await app.get(AuditService).verify(orgId, { full: opts.full === true });
        print(result);
        if (!result.valid) process.exitCode = 2;
      });
    });

  program
    .command('audit:checkpoint')
    .description(
      "Verify an organization's audit chain up to its head and sign that head (a signed checkpoint)",
    )
    .argument('<orgId>')
    .action(async (orgId: string) => {
      await withContext(async (app) => print(await app.get(AuditCheckpointsService).checkpoint(orgId)));
    });

  program
    .command('db:migrate')
    .description('Apply pending database migrations (also done at start-up)')
    .action(async () => {
      const config = loadConfig();
      const handle = await createDatabaseHandle({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        await runMigrations(handle);
        process.stdout.write(`Migrations applied (${handle.driver})\n`);
      } finally {
        await handle.close();
      }
    });

  program
    .command('config:reference')
    .description('Write the configuration reference (every environment variable) as Markdown')
    .argument('[file]', 'output path', 'docs/configuration.md')
    .action((file: string) => {
      writeFileSync(file, renderConfigurationReference());
      process.stdout.write(`Wrote ${file}\n`);
    });

  program
    .command('openapi:write')
    .description('Write the OpenAPI document to a file')
    .argument('[file]', 'output path', 'openapi.json')
    .action(async (file: string) => {
      process.env.WORKERS = 'off';
      delete process.env.METRICS_PORT;
      const config = { ...loadConfig(), publicUrl: 'http://localhost:3000' };
      const app = await createHttpApp(AppModule, config);
      try {
        await app.init();
        writeFileSync(file, JSON.stringify(buildOpenApiDocument(app, config), null, 2) + '\n');
        process.stdout.write(`Wrote ${file}\n`);
      } finally {
        await app.close();
      }
    });

  return program;
}
