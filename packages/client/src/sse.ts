/** One dispatched server-sent event. */
export interface SseMessage {
  /**
   * The last event ID when it was dispatched (WHATWG: the last `id:` seen, which persists across events, or the one
   * the parser started from); `''` once an empty `id:` reset it; undefined when none was ever set.
   */
  id: string | undefined;
  /** `event:` (default `message`). */
  event: string;
  /** The `data:` lines, joined with line feeds. */
  data: string;
}

/** What a chunk of the stream gave: events, and the `retry:` delay when the server sent one. */
export interface SseOutput {
  messages: SseMessage[];
  retryMs: number | undefined;
}

/**
 * An incremental parser of `text/event-stream` (the WHATWG HTML "event stream interpretation"): lines end with CRLF,
 * LF or CR, a chunk may end anywhere (in a line, between a CR and its LF), `:` lines are comments, an empty line
 * dispatches the event, and an event without data is not dispatched.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private lastEventId: string | undefined;
  private sawCarriageReturn = false;
  private first = true;

  constructor(lastEventId?: string) {
    this.lastEventId = lastEventId;
  }

  push(chunk: string): SseOutput {
    const output: SseOutput = { messages: [], retryMs: undefined };
    // An empty chunk changes nothing (in particular, a CR that ended the last chunk still waits for its LF).
    if (chunk.length === 0) return output;
    let text = chunk;
    if (this.first) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR at the end of the last chunk ended its line; an LF that starts this one belongs to it.
    if (this.sawCarriageReturn && text.startsWith('\n')) text = text.slice(1);
    this.sawCarriageReturn = false;
    this.buffer += text;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const char = this.buffer[i];
      if (char !== '\n' && char !== '\r') continue;
      this.line(this.buffer.slice(start, i), output);
      if (char === '\r') {
        if (i + 1 === this.buffer.length) this.sawCarriageReturn = true;
        else if (this.buffer[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return output;
  }

  private line(line: string, output: SseOutput): void {
    if (line === '') {
      if (this.data.length > 0) {
        output.messages.push({
          id: this.lastEventId,
          event: this.event || 'message',
          data: this.data.join('\n'),
        });
      }
      this.data = [];
      this.event = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) output.retryMs = Number(value);
        break;
      default:
        break;
    }
  }
}
