import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte sent until the server closed the connection. */
  closedAfterMs: number;
}

/** Parses one HTTP/1.1 response (Content-Length bodies only, as the service sends them). */
export function parseResponse(raw: Buffer): Omit<RawResponse, 'closedAfterMs'> | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    body: raw.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/**
 * Sends bytes exactly as given on a fresh connection (for requests no HTTP client would build: repeated
 * headers, invalid UTF-8, oversized heads, half-sent bodies) and reads until the server closes it or `waitMs`
 * passes. `chunks` are written one after another; the connection is left open after the last one.
 */
export function rawExchange(
  port: number,
  chunks: (string | Buffer)[],
  waitMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const received: Buffer[] = [];
    const socket: Socket = connect(port, '127.0.0.1', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${waitMs} ms`));
    }, waitMs);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer is fine; no answer is caught below
    socket.on('close', () => {
      clearTimeout(timer);
      const parsed = parseResponse(Buffer.concat(received));
      if (!parsed) reject(new Error(`connection closed without a response after ${Date.now() - started} ms`));
      else resolve({ ...parsed, closedAfterMs: Date.now() - started });
    });
  });
}

/** Sends one request with `Connection: close` and returns the parsed answer. */
export function rawRequest(
  port: number,
  head: { method: string; path: string; headers?: [string, string][] },
  body?: string | Buffer,
): Promise<RawResponse> {
  const lines = [`${head.method} ${head.path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of head.headers ?? []) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const chunks: (string | Buffer)[] = [`${lines.join('\r\n')}\r\n\r\n`];
  if (body !== undefined) chunks.push(body);
  return rawExchange(port, chunks);
}
