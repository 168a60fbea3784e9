/**
 * A file the service answered (the compliance PDF, the NDJSON audit export). Its body is read once: by `bytes()`,
 * `text()`, `stream()` or `ndjson()`.
 */
export class Download {
  constructor(readonly response: Response) {}

  /** The media type, without parameters (`application/pdf`). */
  get contentType(): string | null {
    return this.response.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
  }

  /** The file name of `Content-Disposition`, when the answer names one. */
  get filename(): string | null {
    const disposition = this.response.headers.get('content-disposition');
    if (!disposition) return null;
    const encoded = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
    if (encoded) return decodeURIComponent(encoded[1]!.trim());
    const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
    return plain ? plain[1]!.trim() : null;
  }

  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.response.arrayBuffer());
  }

  text(): Promise<string> {
    return this.response.text();
  }

  /** The body as it arrives. */
  stream(): ReadableStream<Uint8Array> {
    if (!this.response.body) throw new TypeError('The answer has no body');
    return this.response.body;
  }

  /** Newline-delimited JSON, one parsed value a line, as the lines arrive (empty lines skipped). */
  async *ndjson<T = unknown>(): AsyncIterableIterator<T> {
    const reader = this.stream().getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
        const lines = buffer.split('\n');
        buffer = done ? '' : lines.pop()!;
        for (const line of lines) {
          if (line.trim() !== '') yield JSON.parse(line) as T;
        }
        if (done) return;
      }
    } finally {
      reader.releaseLock();
    }
  }
}
