import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A real HTTP receiver for webhook tests, on 127.0.0.1: records every request, and answers from a queue of
 * programmed answers (then 200).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly answers: ReceiverAnswer[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        receiver.received.push({
          headers: req.headers,
          body,
          json: JSON.parse(body),
          receivedAt: Date.now(),
        });
        const answer = receiver.answers.shift() ?? { status: 200, body: 'ok' };
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
        receiver.waiters = receiver.waiters.filter((w) => {
          if (receiver.received.length < w.count) return true;
          w.resolve();
          return false;
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Answers the next requests with these, in order. */
  answer(...answers: ReceiverAnswer[]): void {
    this.answers.push(...answers);
  }

  /** Resolves once `count` requests in all have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs = 5000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.received.length} of ${count} webhooks arrived`)),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  ofType(type: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.json.type === type);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
