import type { OtlpAttributes, OtlpSpanEvent, ToolCall } from './otlp-trace.types.js';

/**
 * Reads chat messages from the several shapes the OpenTelemetry GenAI semantic conventions have used:
 * - current: `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions`
 *   (structured, or a JSON string because span attributes cannot hold objects in most SDKs), also carried
 *   on a `gen_ai.client.inference.operation.details` event;
 * - deprecated: `gen_ai.prompt` / `gen_ai.completion` (text or JSON), their OpenLLMetry-style indexed form
 *   (`gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`) and the `gen_ai.content.prompt/completion` events;
 * - deprecated per-message events: gen_ai.system.message, gen_ai.user.message, gen_ai.assistant.message,
 *   gen_ai.tool.message, gen_ai.choice.
 */

export interface ChatMessage {
  role: string;
  text: string;
  toolCalls: ToolCall[];
}

export interface Conversation {
  input: ChatMessage[];
  output: ChatMessage[];
  systemPrompt: string;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Attribute values that should be JSON but arrive as strings; a string that is not JSON stays a string. */
export function parseJsonish(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return value;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return value;
  }
}

/**
 * Text of a content value: a string, a list of parts/strings, or a part object ({content} or {text}).
 * A string that parses as JSON but holds no text parts was the user's literal text, so it is kept as is.
 */
export function contentText(value: unknown): string {
  const parsed = parseJsonish(value);
  let text = '';
  if (typeof parsed === 'string') text = parsed;
  else if (Array.isArray(parsed)) text = parsed.map(contentText).filter(Boolean).join('\n');
  else if (isObj(parsed) && (parsed.type === undefined || parsed.type === 'text')) {
    text = contentText(parsed.content ?? parsed.text);
  }
  return text === '' && typeof value === 'string' ? value : text;
}

function toolCall(name: unknown, args: unknown): ToolCall | undefined {
  if (typeof name !== 'string' || name === '') return undefined;
  return { name, arguments: parseJsonish(args) ?? {} };
}

/** OpenAI-style tool_calls ([{function: {name, arguments}}] or [{name, arguments}]). */
function legacyToolCalls(value: unknown): ToolCall[] {
  const parsed = parseJsonish(value);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((c) => {
    if (!isObj(c)) return [];
    const fn = isObj(c.function) ? c.function : c;
    const call = toolCall(fn.name, fn.arguments);
    return call ? [call] : [];
  });
}

function toMessage(raw: unknown, defaultRole: string): ChatMessage | undefined {
  if (typeof raw === 'string') return { role: defaultRole, text: raw, toolCalls: [] };
  if (!isObj(raw)) return undefined;
  const role = typeof raw.role === 'string' && raw.role ? raw.role : defaultRole;
  if (Array.isArray(raw.parts)) {
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const part of raw.parts) {
      if (!isObj(part)) continue;
      if (part.type === 'text' && typeof part.content === 'string') texts.push(part.content);
      if (part.type === 'tool_call') {
        const call = toolCall(part.name, part.arguments);
        if (call) toolCalls.push(call);
      }
    }
    return { role, text: texts.join('\n'), toolCalls };
  }
  // Pre-"parts" shape: {role, content, tool_calls}.
  return { role, text: contentText(raw.content), toolCalls: legacyToolCalls(raw.tool_calls) };
}

/** A messages attribute: JSON string or array of messages; a non-JSON string is one message of plain text. */
export function messagesFrom(value: unknown, defaultRole: string): ChatMessage[] {
  if (value === undefined || value === null || value === '') return [];
  const parsed = parseJsonish(value);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  const messages = list.flatMap((m) => toMessage(m, defaultRole) ?? []);
  // JSON that is not message-shaped was literal text, not a message list: keep it verbatim.
  const messageShaped = list.some(
    (m) => typeof m === 'string' || (isObj(m) && ('role' in m || 'parts' in m || 'content' in m)),
  );
  return messageShaped || typeof value !== 'string'
    ? messages
    : [{ role: defaultRole, text: value, toolCalls: [] }];
}

/** OpenLLMetry flattens messages into `<prefix>.<i>.role` / `<prefix>.<i>.content` attributes. */
function indexedMessages(attrs: OtlpAttributes, prefix: string, defaultRole: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; attrs[`${prefix}.${i}.content`] !== undefined || attrs[`${prefix}.${i}.role`]; i++) {
    const role = attrs[`${prefix}.${i}.role`];
    out.push({
      role: typeof role === 'string' && role ? role : defaultRole,
      text: contentText(attrs[`${prefix}.${i}.content`]),
      toolCalls: [],
    });
  }
  return out;
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

function eventMessage(event: OtlpSpanEvent, role: string): ChatMessage {
  const a = event.attributes;
  // gen_ai.choice carries {message: {role, content, tool_calls}}; the others carry content/tool_calls directly.
  const nested = parseJsonish(a.message);
  if (isObj(nested)) return toMessage(nested, role) ?? { role, text: '', toolCalls: [] };
  return { role, text: contentText(a.content ?? a.message), toolCalls: legacyToolCalls(a.tool_calls) };
}

/** First non-empty result among the candidates, in order of preference. */
function firstOf(...candidates: Array<() => ChatMessage[]>): ChatMessage[] {
  for (const candidate of candidates) {
    const messages = candidate();
    if (messages.length > 0) return messages;
  }
  return [];
}

export function readConversation(attrs: OtlpAttributes, events: OtlpSpanEvent[]): Conversation {
  const fromEventAttr = (key: string, role: string) => () =>
    events.flatMap((e) => (e.attributes[key] !== undefined ? messagesFrom(e.attributes[key], role) : []));
  const messageEvents = events.filter((e) => e.name in EVENT_ROLES);
  const choiceEvents = events.filter((e) => e.name === 'gen_ai.choice');

  const input = firstOf(
    () => messagesFrom(attrs['gen_ai.input.messages'], 'user'),
    fromEventAttr('gen_ai.input.messages', 'user'),
    () => messagesFrom(attrs['gen_ai.prompt'], 'user'),
    () => indexedMessages(attrs, 'gen_ai.prompt', 'user'),
    fromEventAttr('gen_ai.prompt', 'user'),
    () => messageEvents.map((e) => eventMessage(e, EVENT_ROLES[e.name])),
  );

  // With per-message events, an assistant message after the last user message is the reply (some
  // instrumentations emit it instead of gen_ai.choice); earlier assistant messages are history.
  const lastUser = input.map((m) => m.role).lastIndexOf('user');
  const trailingAssistant = input.slice(lastUser + 1).filter((m) => m.role === 'assistant');
  const output = firstOf(
    () => messagesFrom(attrs['gen_ai.output.messages'], 'assistant'),
    fromEventAttr('gen_ai.output.messages', 'assistant'),
    () => messagesFrom(attrs['gen_ai.completion'], 'assistant'),
    () => indexedMessages(attrs, 'gen_ai.completion', 'assistant'),
    fromEventAttr('gen_ai.completion', 'assistant'),
    () => choiceEvents.map((e) => eventMessage(e, 'assistant')),
    () => (messageEvents.length > 0 ? trailingAssistant : []),
  );
  const history = output === trailingAssistant ? input.slice(0, lastUser + 1) : input;

  const instructions = attrs['gen_ai.system_instructions'] ?? fromEventAttrValue(events);
  const systemPrompt =
    instructions !== undefined
      ? contentText(instructions)
      : history
          .filter((m) => m.role === 'system' || m.role === 'developer')
          .map((m) => m.text)
          .filter(Boolean)
          .join('\n\n');

  return { input: history, output, systemPrompt };
}

function fromEventAttrValue(events: OtlpSpanEvent[]): unknown {
  return events.find((e) => e.attributes['gen_ai.system_instructions'] !== undefined)?.attributes[
    'gen_ai.system_instructions'
  ];
}
