import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AppLogger } from '../logging/app-logger.js';
import { bearerMatches, METRICS_PATH, metricsTokenDigest } from './metrics-endpoint.js';
import { Metrics } from './metrics.js';

/** A scrape is one small request: its head and body must arrive well within this. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * METRICS_PORT: a small HTTP server of its own, in every process (the API and the worker, which has no other
 * listener), that answers `GET /metrics` and nothing else. Without METRICS_TOKEN it asks no credentials: who may
 * reach it is decided by METRICS_HOST and the network. With METRICS_TOKEN it asks the same bearer token as the main
 * port, so that a token an operator set protects every place the metrics are served. Started with the application
 * (a lifecycle hook, so that both entry points get it) and closed with it.
 */
@Injectable()
export class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;
  private readonly token: Buffer | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly logger: AppLogger,
  ) {
    this.token = config.metrics.token === undefined ? undefined : metricsTokenDigest(config.metrics.token);
  }

  /** The port it listens on (the system's choice when configured as 0), or undefined when it does not listen. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null | undefined)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port, host } = this.config.metrics;
    if (port === undefined) return;
    const server = createServer(
      { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS },
      (req, res) => this.answer(req, res),
    );
    // A port taken or refused stops the start-up, as the main port's would: an operator who configured it is told.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`Metrics listening on ${host}:${this.port}${METRICS_PATH}`, 'Metrics');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      // A scraper's kept-alive connection would hold the close until it timed out.
      server.closeAllConnections();
    });
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH) return plain(res, 404, 'Not found: this port serves GET /metrics only\n');
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      return plain(res, 405, 'Method not allowed: GET /metrics\n');
    }
    if (this.token !== undefined && !bearerMatches(req.headers.authorization, this.token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      return plain(res, 401, 'Unauthorized: a valid metrics token is required\n');
    }
    this.metrics.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': this.metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
      },
      (err: unknown) => {
        this.logger.error({ err }, 'The metrics could not be collected', 'Metrics');
        plain(res, 500, 'The metrics could not be collected\n');
      },
    );
  }
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}
