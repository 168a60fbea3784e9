// A webhook receiver on node:http: it verifies each delivery's signature (Standard Webhooks) with the client's
// verifyWebhook, drops repeats, and handles the typed events.
//
//   WEBHOOK_SECRET=whsec_… node examples/webhook-receiver.ts
//
// WEBHOOK_SECRET is the webhook's signing secret, shown once when the webhook is created (examples/setup.ts with
// WEBHOOK_URL=http://localhost:4000/webhooks prints it) or when its secret is rotated. During a rotation give
// both, separated by a space: a delivery signed with either is accepted. WEBHOOK_PORT defaults to 4000.
// The service delivers to a local address only when it runs with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@governance/client';
import type { GovernanceEvent } from '@governance/client';

const secrets = (process.env.WEBHOOK_SECRET ?? '').split(/\s+/).filter(Boolean);
if (secrets.length === 0) {
  console.error('WEBHOOK_SECRET is not set (see examples/README.md)');
  process.exit(2);
}
// A malformed secret is a mistake of this configuration (verifyWebhook throws TypeError for it): say so at start.
const malformed = secrets.filter((secret) => !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret));
if (malformed.length > 0) {
  console.error('WEBHOOK_SECRET holds a value that is not a whsec_… secret (see examples/README.md)');
  process.exit(2);
}
const port = Number(process.env.WEBHOOK_PORT ?? 4000);
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Event ids already handled. Delivery is at least once: a retry after a lost answer, or a redelivery, carries the
 * same id (the `webhook-id` header), so a receiver deduplicates on it. A real one keeps these in its database.
 */
const handled = new Set<string>();

/** What a receiver does with each event; here it says what it would do. */
function handle(event: GovernanceEvent): void {
  // `type` discriminates the union: in each case, `event.data` has that event's fields.
  switch (event.type) {
    case 'trace.flagged':
      console.log(`  page a reviewer: trace ${event.data.traceId} waits as item ${event.data.reviewItemId}`);
      break;
    case 'trace.blocked':
      console.log(`  alert the agent's owner: trace ${event.data.traceId} was blocked`);
      break;
    case 'review.completed':
      console.log(`  resume the agent's task: item ${event.data.reviewItemId} ${event.data.status}`);
      break;
    case 'webhook.test':
      console.log(`  ${event.data.message}`);
      break;
    default:
      // Subscribed to more than this receiver knows: acknowledge it all the same, or the service retries it.
      console.log('  not handled here');
  }
}

async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  // The signature covers the body's exact bytes: verify those, and parse only what verified (verifyWebhook
  // returns the parsed event). Re-serialised JSON would not verify.
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413, { connection: 'close' }).end();
      return;
    }
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks);

  let event: GovernanceEvent;
  try {
    // Also refuses a timestamp more than 5 minutes away from now: a captured delivery cannot be replayed later.
    event = await verifyWebhook({ body, headers: req.headers, secrets });
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(`refused delivery ${String(req.headers['webhook-id'])}: ${err.message}`);
    res.writeHead(401).end();
    return;
  }

  if (handled.has(event.id)) {
    console.log(`${event.type}: ${event.id} again (a retry), already handled`);
  } else {
    console.log(`verified ${event.type} ${event.id}, sent ${event.timestamp}`);
    // Handled first, marked after: if handling throws, the 500 below makes the service deliver it again, and the
    // redelivery is not mistaken for a repeat. (handle is synchronous here; a receiver whose handling awaits would
    // also keep the ids in flight, so that a concurrent redelivery waits instead of handling it twice.) Answer
    // within the service's 10 s; slow work belongs on a durable queue of the receiver's own, enqueued here.
    handle(event);
    handled.add(event.id);
  }
  // Answered only now, once the event is handled: a 2xx tells the service it is done. Any 2xx is success; anything
  // else is retried (about 30 s, 2 min, 10 min, 1 h, 6 h), and 410 disables the webhook.
  res.writeHead(204).end();
}

const server = createServer((req, res) => {
  receive(req, res).catch((err: unknown) => {
    // Not marked handled: the service delivers it again.
    console.error('handling a delivery failed:', err);
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});
server.listen(port, () => console.log(`listening on http://localhost:${port} for webhook deliveries`));

// Stop on Ctrl-C or SIGTERM: finish the requests in flight, then exit 0. (The service keeps its connections
// alive between deliveries; close() drops the idle ones.)
const shutdown = () => server.close(() => console.log('stopped'));
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
