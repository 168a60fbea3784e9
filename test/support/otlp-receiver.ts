import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as a receiver reads it from an OTLP/JSON export, attribute values unwrapped. */
export interface ReceivedSpan {
  scope: string;
  service: unknown;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
}

type JsonAttribute = { key: string; value: Record<string, unknown> };
type JsonSpan = Omit<ReceivedSpan, 'scope' | 'service' | 'attributes' | 'parentSpanId' | 'status'> & {
  parentSpanId?: string;
  attributes?: JsonAttribute[];
  status?: { code?: number; message?: string };
};
type JsonExport = {
  resourceSpans?: {
    resource?: { attributes?: JsonAttribute[] };
    scopeSpans?: { scope?: { name: string }; spans?: JsonSpan[] }[];
  }[];
};

const unwrap = (attributes: JsonAttribute[] = []) =>
  Object.fromEntries(
    attributes.map(({ key, value }) => {
      const [kind, raw] = Object.entries(value)[0] ?? [];
      return [key, kind === 'intValue' ? Number(raw) : raw];
    }),
  );

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 for tests: answers 200 to any export, keeps every request, reads the spans
 * of OTLP/JSON exports (which carry links, which the repository's own OTLP decoder skips) and keeps the bodies of
 * OTLP/protobuf ones.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: { path: string | undefined; contentType: string | undefined }[] = [];
  /** The bodies of OTLP/protobuf exports, kept as they came. */
  readonly protobufBodies: Buffer[] = [];

  private constructor(private readonly server: Server) {}

  static async start(port = 0): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver.requests.push({ path: req.url, contentType: req.headers['content-type'] });
        const body = Buffer.concat(chunks);
        if (req.headers['content-type']?.includes('json'))
          receiver.read(JSON.parse(body.toString('utf8')) as JsonExport);
        else receiver.protobufBodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    return receiver;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves with what `find` returns once it returns something (rejects after `timeoutMs`). */
  async waitFor<T>(find: (spans: ReceivedSpan[]) => T | undefined, timeoutMs = 10_000): Promise<T> {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const found = find(this.spans);
      if (found !== undefined) return found;
      if (Date.now() > deadline)
        throw new Error(`not received within ${timeoutMs} ms (${this.spans.length} spans)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private read(body: JsonExport): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = unwrap(resourceSpans.resource?.attributes)['service.name'];
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            scope: scopeSpans.scope?.name ?? '',
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: unwrap(span.attributes),
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
            status: span.status ?? {},
          });
        }
      }
    }
  }
}
