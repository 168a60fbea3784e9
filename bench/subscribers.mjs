// The benchmark's subscribers, in a worker thread of their own so that they do not slow the load generator: a
// local webhook receiver (counts each webhook-id and the lag from the event's commit), one SSE client (counts
// each event id), and an OTLP/HTTP traces receiver for bench:observability (counts the exports and their bytes,
// answers each with an empty ExportTraceServiceResponse). The main thread drives it with messages.
import { createServer } from 'node:http';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { EventSource } from 'eventsource';

const STREAM_TYPES = ['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed'];

const percentile = (sorted, p) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

if (!isMainThread) {
  const seen = new Map();
  const lags = [];
  const streamIds = new Map();
  let source;
  const otlp = { exports: 0, bytes: 0 };
  const collector = createServer((req, res) => {
    req.on('data', (c) => {
      otlp.bytes += c.length;
    });
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') otlp.exports += 1;
      // An empty message is a valid ExportTraceServiceResponse (no partial success).
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.set(id, (seen.get(id) ?? 0) + 1);
      lags.push(Date.now() - Date.parse(body.timestamp));
      res.writeHead(204).end();
    });
  });
  parentPort.on('message', async ({ id, op, arg }) => {
    const reply = (value) => parentPort.postMessage({ id, value });
    if (op === 'listen') {
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      reply(`http://127.0.0.1:${server.address().port}/hook`);
    } else if (op === 'otlp') {
      await new Promise((r) => collector.listen(0, '127.0.0.1', r));
      reply(`http://127.0.0.1:${collector.address().port}`);
    } else if (op === 'otlpStats') {
      reply({ ...otlp });
    } else if (op === 'stream') {
      source = new EventSource(arg);
      for (const type of STREAM_TYPES) {
        source.addEventListener(type, (e) => streamIds.set(e.lastEventId, (streamIds.get(e.lastEventId) ?? 0) + 1));
      }
      source.onopen = () => reply(true);
    } else if (op === 'reset') {
      seen.clear();
      lags.length = 0;
      streamIds.clear();
      reply(true);
    } else if (op === 'stats') {
      const sorted = [...lags].sort((a, b) => a - b);
      reply({
        received: seen.size,
        duplicates: [...seen.values()].filter((n) => n > 1).length,
        streamReceived: streamIds.size,
        streamDuplicates: [...streamIds.values()].filter((n) => n > 1).length,
        lagP50: percentile(sorted, 50),
        lagP99: percentile(sorted, 99),
      });
    } else if (op === 'close') {
      source?.close();
      server.closeAllConnections();
      collector.closeAllConnections();
      if (collector.listening) collector.close();
      server.close(() => reply(true));
    }
  });
}

/** Starts the worker; `call(op, arg)` resolves with its answer. */
export function startSubscribers() {
  const worker = new Worker(new URL(import.meta.url));
  let next = 0;
  const pending = new Map();
  worker.on('message', ({ id, value }) => {
    pending.get(id)?.(value);
    pending.delete(id);
  });
  const call = (op, arg) =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      worker.postMessage({ id, op, arg });
    });
  return {
    call,
    async close() {
      await call('close');
      await worker.terminate();
    },
  };
}
