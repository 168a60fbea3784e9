import 'reflect-metadata';
import { ConfigError, loadConfig } from '#platform';
import { AppModule } from './app.module.js';
import { createHttpApp } from './bootstrap.js';

async function main(): Promise<void> {
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
  // Nest closes gracefully on SIGTERM (in-flight requests, background mail, then the pool); past the
  // configured timeout the process exits anyway rather than hang a rollout.
  process.once('SIGTERM', () => setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref());
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
