import { describe, expect, it } from 'vitest';
import { type SseMessage, SseParser } from './sse.js';

/** Every message the parser dispatches when the text arrives in these chunks. */
function parse(
  chunks: string[],
  lastEventId?: string,
): { messages: SseMessage[]; retry: number | undefined } {
  const parser = new SseParser(lastEventId);
  const messages: SseMessage[] = [];
  let retry: number | undefined;
  for (const chunk of chunks) {
    const output = parser.push(chunk);
    messages.push(...output.messages);
    retry = output.retryMs ?? retry;
  }
  return { messages, retry };
}

const FRAME = 'id: 0001\nevent: trace.flagged\ndata: {"type":"trace.flagged"}\n\n';

describe('SseParser', () => {
  it('reads the service’s frames: the greeting, retry, heartbeats and an event', () => {
    const { messages, retry } = parse([': connected\nretry: 3000\n\n', FRAME, ': heartbeat\n\n']);
    expect(retry).toBe(3000);
    expect(messages).toEqual([{ id: '0001', event: 'trace.flagged', data: '{"type":"trace.flagged"}' }]);
  });

  it('gives the same messages however the text is cut into chunks', () => {
    const text = `${FRAME}id: 0002\nevent: review.completed\ndata: {"a":1}\n\n`;
    const whole = parse([text]).messages;
    expect(whole).toHaveLength(2);
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse([text.slice(0, cut), text.slice(cut)]).messages).toEqual(whole);
    }
    expect(parse([...text]).messages).toEqual(whole);
  });

  it('takes CRLF and CR line ends, a CR and its LF in different chunks included', () => {
    const crlf = FRAME.replaceAll('\n', '\r\n');
    const cr = FRAME.replaceAll('\n', '\r');
    const expected = parse([FRAME]).messages;
    expect(parse([crlf]).messages).toEqual(expected);
    expect(parse([cr]).messages).toEqual(expected);
    const at = crlf.indexOf('\r\n') + 1;
    expect(parse([crlf.slice(0, at), crlf.slice(at)]).messages).toEqual(expected);
  });

  it('keeps a CR that ended a chunk waiting for its LF across empty chunks', () => {
    expect(parse(['data: a\r', '', '\ndata: b\r\n\r\n']).messages).toEqual([
      { id: undefined, event: 'message', data: 'a\nb' },
    ]);
    expect(parse(['data: a\r', '', '', '\n', '', '\r\n']).messages).toEqual([
      { id: undefined, event: 'message', data: 'a' },
    ]);
    // Every cut of a CRLF text, with empty chunks in between, gives what the whole text gives.
    const crlf = `${FRAME}id: 0002\ndata: {"a":1}\n\n`.replaceAll('\n', '\r\n');
    const whole = parse([crlf]).messages;
    for (let cut = 1; cut < crlf.length; cut++) {
      expect(parse([crlf.slice(0, cut), '', crlf.slice(cut)]).messages).toEqual(whole);
    }
  });

  it('reports only messages and retry (no unused activity flag)', () => {
    expect(Object.keys(new SseParser().push(': heartbeat\n\n')).sort()).toEqual(['messages', 'retryMs']);
  });

  it('joins data lines, strips one leading space only, and defaults the event name to message', () => {
    const { messages } = parse(['data:first\ndata:  second\ndata\n\n']);
    expect(messages).toEqual([{ id: undefined, event: 'message', data: 'first\n second\n' }]);
  });

  it('keeps the last id across events and from the start, and ignores an id with NUL', () => {
    const { messages } = parse(['data: a\n\nid: 7\ndata: b\n\ndata: c\n\nid: x\0y\ndata: d\n\n'], '5');
    expect(messages.map((m) => m.id)).toEqual(['5', '7', '7', '7']);
  });

  it('resets the last id to empty on an id line without a value, as WHATWG says', () => {
    const { messages } = parse(['id: 7\ndata: a\n\nid\ndata: b\n\ndata: c\n\nid:\ndata: d\n\n']);
    expect(messages.map((m) => m.id)).toEqual(['7', '', '', '']);
  });

  it('dispatches nothing for an event without data, or an unfinished one', () => {
    expect(parse(['id: 9\nevent: x\n\n', 'data: never ended\n']).messages).toEqual([]);
  });

  it('ignores a byte-order mark, unknown fields and a retry that is not a number', () => {
    const { messages, retry } = parse(['\uFEFFfoo: bar\nretry: soon\ndata: x\n\n']);
    expect(messages).toEqual([{ id: undefined, event: 'message', data: 'x' }]);
    expect(retry).toBeUndefined();
  });
});
