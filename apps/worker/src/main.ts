import 'reflect-metadata';
import type { AppConfig } from '#platform';
import { startTracing } from '../../api/src/tracing.js';

/**
 * The same modules without the HTTP listener, for deployments that scale background work apart from the API.
 * Scheduled work is claimed from PostgreSQL, so any number of workers and API replicas can run together.
 */
async function main(): Promise<void> {
  // As in the API: tracing starts (when the OTEL_* variables ask for it) before the application is imported.
  await startTracing('governance-worker');
  const [{ NestFactory }, { APP_CONFIG, AppLogger, keepStringPrototypeFast }, { AppModule }] =
    await Promise.all([import('@nestjs/core'), import('#platform'), import('../../api/src/app.module.js')]);
  keepStringPrototypeFast(); // as in the API
  const app = await NestFactory.createApplicationContext(AppModule, { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  app.enableShutdownHooks();
  // Jobs in progress finish and the pool closes; past SHUTDOWN_TIMEOUT_MS the process exits anyway.
  const { shutdownTimeoutMs } = app.get<AppConfig>(APP_CONFIG);
  process.once('SIGTERM', () => setTimeout(() => process.exit(1), shutdownTimeoutMs).unref());
  app.get(AppLogger).log('Governance worker started');
}

main().catch((err: unknown) => {
  process.stderr.write(`Worker start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
