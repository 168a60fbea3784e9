// A raw HTTP/1.1 client on node:http: headers are sent as given (duplicates, Latin-1 bytes, order), the body as
// exact bytes. fetch would normalise all of that away. Each request gets its own connection: a server that drops
// a connection after a hostile request (Node's bare 431 does, without `Connection: close`) must not make the next
// request fail on a reused socket and be blamed for it.
import http from 'node:http';

export interface WireRequest {
  method: string;
  /** Path and query string, exactly as sent. */
  path: string;
  headers: [string, string][];
  body?: Buffer;
}

export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

export interface WireResult {
  response?: WireResponse;
  /** A socket error, a timeout, or a refusal of the request by the client itself. */
  error?: string;
  ms: number;
}

const CHUNK = 64 * 1024;

export class HttpClient {
  /**
   * The local address requests leave from (any of 127.0.0.0/8 reaches a service on 127.0.0.1): the fuzzer moves it
   * to stay under per-IP rate limits it would otherwise exhaust (the SCIM routes').
   */
  localAddress: string | undefined;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly timeoutMs = 30_000,
  ) {}

  get base(): string {
    return `http://${this.host}:${this.port}`;
  }

  send(req: WireRequest): Promise<WireResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    return new Promise<WireResult>((resolve) => {
      let settled = false;
      const done = (r: WireResult) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      const flat: string[] = ['Host', `${this.host}:${this.port}`];
      for (const [k, v] of req.headers) flat.push(k, v);
      // Without a length Node would send an empty chunked body, which servers read as a body without a type.
      if (req.body && req.body.length > 0) flat.push('Content-Length', String(req.body.length));
      else if (!['GET', 'HEAD', 'OPTIONS'].includes(req.method)) flat.push('Content-Length', '0');
      let request: http.ClientRequest;
      let responded = false;
      try {
        request = http.request(
          {
            host: this.host,
            port: this.port,
            method: req.method,
            path: req.path,
            headers: flat,
            agent: false,
            setHost: false,
            ...(this.localAddress ? { localAddress: this.localAddress } : {}),
          },
          (res) => {
            responded = true;
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              done({
                response: {
                  status: res.statusCode ?? 0,
                  headers: res.headers,
                  body: Buffer.concat(chunks),
                  ms: elapsed(),
                },
                ms: elapsed(),
              }),
            );
            res.on('error', (e) => done({ error: `response stream: ${e.message}`, ms: elapsed() }));
          },
        );
      } catch (e) {
        // Node refused to build the request (a character it will not put in a header or a path).
        done({ error: `client refused the request: ${(e as Error).message}`, ms: elapsed() });
        return;
      }
      request.setTimeout(this.timeoutMs, () => {
        request.destroy(new Error(`no answer within ${this.timeoutMs} ms`));
      });
      request.on('error', (e: NodeJS.ErrnoException) => {
        // The server answered before taking the whole body (a 413) and closed: the answer is what counts.
        if (responded && (e.code === 'EPIPE' || e.code === 'ECONNRESET')) return;
        done({ error: `${e.code ?? 'error'}: ${e.message}`, ms: elapsed() });
      });
      const body = req.body ?? Buffer.alloc(0);
      if (body.length <= CHUNK) {
        request.end(body.length > 0 ? body : undefined);
        return;
      }
      // A large body goes out in chunks, as curl sends it: an early answer (a 413 before the body is read) is
      // parsed as soon as it arrives, and the rest of the body is not sent.
      let offset = 0;
      const pump = () => {
        if (responded || request.destroyed) return;
        if (offset >= body.length) {
          request.end();
          return;
        }
        const chunk = body.subarray(offset, offset + CHUNK);
        offset += chunk.length;
        // A millisecond between chunks lets an early answer in before the next write fails on a closed socket.
        if (request.write(chunk)) setTimeout(pump, 1);
        else request.once('drain', () => setTimeout(pump, 1));
      };
      pump();
    });
  }

  /** A JSON request with the usual headers (set-up and credential checks, not fuzzing). */
  async json(
    method: string,
    path: string,
    body?: unknown,
    headers: [string, string][] = [],
  ): Promise<{ status: number; body: unknown }> {
    const hs: [string, string][] = [...headers];
    let bytes: Buffer | undefined;
    if (body !== undefined) {
      bytes = Buffer.from(JSON.stringify(body), 'utf8');
      hs.push(['Content-Type', 'application/json']);
    }
    const r = await this.send({ method, path, headers: hs, body: bytes });
    if (!r.response) throw new Error(`${method} ${path}: ${r.error}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(r.response.body.toString('utf8'));
    } catch {
      parsed = r.response.body.toString('utf8');
    }
    return { status: r.response.status, body: parsed };
  }
}
