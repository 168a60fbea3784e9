import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppLogger } from '#platform';
import { AppModule } from '../../api/src/app.module.js';

/**
 * The same modules without the HTTP listener, for deployments that scale background work apart from the API.
 * Scheduled work is claimed from PostgreSQL, so any number of workers and API replicas can run together.
 */
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule, { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  app.enableShutdownHooks();
  app.get(AppLogger).log('Governance worker started');
}

main().catch((err: unknown) => {
  process.stderr.write(`Worker start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
