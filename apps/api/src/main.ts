import 'reflect-metadata';
import { startTracing } from './tracing.js';

async function main(): Promise<void> {
  // Tracing (when the OTEL_* variables ask for it) starts before the application is imported: its instrumentations
  // patch http, fastify, pg and ioredis as they load. Hence the dynamic imports.
  await startTracing('governance-service');
  const [{ ConfigError, keepStringPrototypeFast, loadConfig }, { AppModule }, { createHttpApp }] =
    await Promise.all([import('#platform'), import('./app.module.js'), import('./bootstrap.js')]);
  // After the imports (ioredis makes String.prototype slow as it loads), before any work.
  keepStringPrototypeFast();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const app = await createHttpApp(AppModule, config);
  // On SIGTERM the process drains (readiness false while requests are still served), then closes gracefully
  // (in-flight requests, background mail, then the pool); past the drain and the configured timeout the process
  // exits anyway rather than hang a rollout.
  process.once('SIGTERM', () =>
    setTimeout(() => process.exit(1), config.shutdownDrainMs + config.shutdownTimeoutMs).unref(),
  );
  await app.listen({ port: config.port, host: config.host });
  process.stdout.write(
    JSON.stringify({
      level: 30,
      msg: `Governance service listening on ${config.host}:${config.port}`,
      docs: `${config.publicUrl}/docs`,
    }) + '\n',
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`Start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
