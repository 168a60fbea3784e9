import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Readiness } from './readiness.js';

/**
 * SIGTERM on an API process (a rolling deploy, a scale-down, `docker stop`): the readiness probe answers 503 at
 * once, every request is still served for `drainMs` so that the load balancer, which polls the probe, stops routing
 * here first, and only then does the application close as Nest closes it (the listener stops, requests in flight
 * are answered with `Connection: close`, event streams end with a reconnect hint, the pool closes). The process then
 * ends on the signal, as Nest's own hook would end it.
 *
 * Nest's shutdown hooks handle the other signals; SIGTERM is this one's, because Nest's would start the close at
 * once, and the close begins by unsubscribing the caches from their invalidations (a revoked key must stay refused
 * while requests are still served). The listener is removed when the application closes: tests start many
 * applications in one process.
 */
export function drainOnSigterm(app: INestApplication, drainMs: number, logger: Logger): void {
  const readiness = app.get(Readiness);
  let stopping = false;
  const onSigterm = (): void => {
    if (stopping) return;
    stopping = true;
    readiness.drain();
    logger.info({ drainMs }, 'SIGTERM: readiness is now false; closing once the drain has passed');
    setTimeout(() => {
      app.close().then(
        () => {
          process.removeListener('SIGTERM', onSigterm);
          process.kill(process.pid, 'SIGTERM');
        },
        (err: unknown) => {
          logger.error({ err }, 'The shutdown failed');
          process.exit(1);
        },
      );
    }, drainMs);
  };
  process.on('SIGTERM', onSigterm);
  (app.getHttpAdapter().getInstance() as FastifyInstance).addHook('onClose', (_instance, done) => {
    process.removeListener('SIGTERM', onSigterm);
    done();
  });
}
