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

  /**
   * The file name of `Content-Disposition`, when the answer names one, made safe to use as a file name: its last
   * path segment only (no `/`, `\\`, `..`), without control characters; null when nothing usable is left. An
   * undecodable `filename*` falls back to `filename`.
   */
  get filename(): string | null {
    const disposition = this.response.headers.get('content-disposition');
    if (!disposition) return null;
    const encoded = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
    if (encoded) {
      const decoded = decodeOrNull(encoded[1]!.trim());
      const safe = decoded === null ? null : safeFilename(decoded);
      if (safe !== null) return safe;
    }
    const plain = /filename\s*=\s*(?:"([^"]*)"|([^;]*))/i.exec(disposition);
    if (!plain) return null;
    return safeFilename((plain[1] ?? plain[2] ?? '').trim());
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

  /**
   * Newline-delimited JSON, one parsed value a line, as the lines arrive (empty lines skipped). Stopping early (a
   * `break`, a throw) cancels the download.
   */
  async *ndjson<T = unknown>(): AsyncIterableIterator<T> {
    const reader = this.stream().getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let finished = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
        const lines = buffer.split('\n');
        buffer = done ? '' : lines.pop()!;
        for (const line of lines) {
          if (line.trim() !== '') yield JSON.parse(line) as T;
        }
        if (done) {
          finished = true;
          return;
        }
      }
    } finally {
      // The consumer stopped before the end (or a line was not JSON): the rest is not wanted.
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
  }
}

function decodeOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    // A malformed escape (`%E0%A4%A`): URIError.
    return null;
  }
}

/** The last path segment of a name, without control characters; null when nothing usable is left. */
function safeFilename(name: string): string | null {
  // eslint-disable-next-line no-control-regex
  const visible = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  const base = visible.split(/[/\\]/).pop()!.trim();
  if (base === '' || base === '.' || base === '..') return null;
  return base;
}
