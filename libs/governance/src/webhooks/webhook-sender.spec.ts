import { SpanStatusCode } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';
import { afterAll, describe, expect, it } from 'vitest';
import { sendWebhook } from './webhook-sender.js';
import { freePort } from '../../../../test/support/free-port.js';

// Registered before the first question to the platform's tracing, as the process's entry does (this file has its own
// process).
const exporter = new node.InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new node.SimpleSpanProcessor(exporter)] });
provider.register();

/** A local port nothing listens on. */
const closedPort = freePort;

describe('the webhook.send span of a failed attempt', () => {
  afterAll(() => provider.shutdown());

  it('says the attempt had no answer in words of its own, not the socket’s', async () => {
    const port = await closedPort();
    const result = await sendWebhook(
      `http://127.0.0.1:${port}/hook?secret=s3cr3t`,
      '{}',
      {},
      {
        allowPrivate: true,
        nowMs: Date.now(),
      },
    );
    expect(result.error).toMatch(/^Connection: /);

    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'webhook.send');
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'No answer' });
    expect(JSON.stringify([span!.status, span!.attributes, span!.events])).not.toMatch(
      new RegExp(`${port}|s3cr3t|ECONNREFUSED`),
    );
  });
});
