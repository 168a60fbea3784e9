// CPU cost of hostile requests: each body below is at most BODY_LIMIT_BYTES (1 MiB by default) and is sent
// sequentially to the built service; the service's own CPU time (user + system, from /proc) is divided by the
// number of requests. The target is at most 50 ms of CPU for any request (for a batch that stores many traces, per
// stored trace: that work is the client's due, not an amplification). Prints a table and exits 1 above it.
// BENCH_REPEAT (requests per body), BENCH_SMOKE (support.mjs).
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { cpuMs, registerOwner, startService, targetMissed } from './support.mjs';

const REPEAT = Number(process.env.BENCH_REPEAT ?? 20);
const TARGET_MS = 50;
const LIMIT = 1024 * 1024;

const wide = (n, prefix = 'k') => `{${Array.from({ length: n }, (_, i) => `"${prefix}${i}":1`).join(',')}}`;
const fill = (template, unit) => {
  // Repeats `unit` (comma-separated) inside template's %s so the body is just under the limit.
  const room = LIMIT - template.length - 16;
  const units = Math.floor(room / (unit.length + 1));
  return template.replace('%s', Array.from({ length: units }, () => unit).join(','));
};
const login = '{"email":"someone@example.com","password":"Wrong-pass-123"%s}';

const service = await startService();
try {
  const token = await registerOwner(service.base, 'cost');
  const auth = { authorization: `Bearer ${token}` };
  const agent = await (
    await fetch(`${service.base}/api/v1/agents`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Cost bench' }),
    })
  ).json();
  const agentKey = { 'x-api-key': agent.data.apiKey };
  const trace = (context) =>
    `{"inputContext":{"prompt":"p","context":${context}},"outputDecision":{"action":"a","text":"t"}}`;
  // The largest shapes the default body limits let through (1,000 keys per object, 10,000 keys and items in all),
  // and bodies past them.
  const blocks = (n, keys) => `{${Array.from({ length: n }, (_, i) => `"o${i}":${wide(keys)}`).join(',')}}`;
  const items = (n, item) => `[${Array.from({ length: n }, () => item).join(',')}]`;
  const attribute = (key, value) => `{"key":"${key}","value":{"stringValue":${JSON.stringify(value)}}}`;
  const span = (genAi) =>
    `{"traceId":"${'a'.repeat(32)}","spanId":"${'b'.repeat(16)}","name":"chat","kind":3,"startTimeUnixNano":"1",` +
    `"endTimeUnixNano":"2","attributes":[${
      genAi
        ? [
            attribute('gen_ai.operation.name', 'chat'),
            attribute('gen_ai.provider.name', 'openai'),
            attribute('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Where is my order?' }] }])),
            attribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'It ships today.' }], finish_reason: 'stop' }])),
          ].join(',')
        : attribute('http.route', '/orders')
    }]}`;
  const otlp = (spans) =>
    `{"resourceSpans":[{"resource":{"attributes":[${attribute('service.name', 'bot')}]},"scopeSpans":[{"scope":{"name":"s"},"spans":[${spans}]}]}]}`;
  const conditions = items(2_400, '{"field":"confidence","operator":"lt","value":0.5}');

  const cases = [
    ['1,000 unknown keys', 'POST', '/api/v1/auth/login', {}, wide(1000)],
    ['10 × 990 keys in an unknown field', 'POST', '/api/v1/auth/login', {}, login.replace('%s', `,"x":${blocks(10, 990)}`)],
    ['9,990 numbers in a string field', 'POST', '/api/v1/auth/login', {}, login.replace('"Wrong-pass-123"%s', items(9_990, '0'))],
    ['9,990 objects in a string field', 'POST', '/api/v1/auth/login', {}, login.replace('"Wrong-pass-123"%s', items(9_990, '{}'))],
    ['policy with 2,400 conditions', 'POST', '/api/v1/policies', auth, `{"name":"p","outcome":"flag","conditions":${conditions}}`],
    ['trace: context of 10 × 990 keys', 'POST', '/api/v1/traces', agentKey, trace(blocks(10, 990))],
    ['trace: 4,990 tool calls', 'POST', '/api/v1/traces', agentKey, `{"inputContext":{"prompt":"p"},"outputDecision":{"action":"a","text":"t","toolCalls":${items(4_990, '{"name":"x"}')}}}`],
    ['preferences patch of 10 × 990 keys', 'PATCH', '/api/v1/auth/me/preferences', auth, blocks(10, 990)],
    ['query string of 500 parameters', 'GET', `/api/v1/traces?${Array.from({ length: 500 }, (_, i) => `q${i}=1`).join('&')}`, auth, undefined],
    ['past the limits: 50,000 unknown keys', 'POST', '/api/v1/auth/login', {}, wide(50_000)],
    ['past the limits: 50,000 keys nested', 'POST', '/api/v1/auth/login', {}, login.replace('%s', `,"x":${blocks(50, 1000)}`)],
    ['past the limits: 1 MiB array of numbers', 'POST', '/api/v1/auth/login', {}, fill('{"email":"a@example.com","password":[%s]}', '0')],
    ['past the limits: 1 MiB array of objects', 'POST', '/api/v1/auth/login', {}, fill('{"email":"a@example.com","password":[%s]}', '{}')],
    ['deep: 64 levels', 'POST', '/api/v1/auth/login', {}, `${'{"a":'.repeat(63)}1${'}'.repeat(63)}`],
    ['1 MiB string field', 'POST', '/api/v1/auth/login', {}, `{"email":"${'a'.repeat(LIMIT - 64)}","password":"x"}`],
    ['gzip: 50,000 unknown keys', 'POST', '/api/v1/auth/login', { 'content-encoding': 'gzip' }, gzipSync(wide(50_000))],
    ['gzip: 64 MiB of spaces', 'POST', '/api/v1/auth/login', { 'content-encoding': 'gzip' }, gzipSync(Buffer.alloc(64 * LIMIT, ' '))],
    ['OTLP JSON, no key: 1 MiB of empty objects', 'POST', '/api/v1/otel/v1/traces', {}, fill('{"resourceSpans":[%s]}', '{}')],
    ['OTLP JSON: 1 MiB of empty objects', 'POST', '/api/v1/otel/v1/traces', agentKey, fill('{"resourceSpans":[%s]}', '{}')],
    ['OTLP JSON: 1 MiB of spans without GenAI attributes', 'POST', '/api/v1/otel/v1/traces', agentKey, otlp(fill('%s', span(false)))],
    // Legitimate work that scales with what is stored: the target applies per stored trace.
    ['OTLP JSON: 100 GenAI spans, stored', 'POST', '/api/v1/otel/v1/traces', agentKey, otlp(Array.from({ length: 100 }, () => span(true)).join(',')), 100],
    ['trace accepted: 100 KiB context', 'POST', '/api/v1/traces', agentKey, trace(JSON.stringify({ notes: 'n'.repeat(100 * 1024 - 64) }))],
  ];

  const rows = [];
  let worst = 0;
  for (const [name, method, path, headers, body, items = 1] of cases) {
    // A fresh connection per request: the service closes one whose body it refused before reading it all.
    const send = () =>
      new Promise((resolve, reject) => {
        const req = request(`${service.base}${path}`, {
          method,
          agent: false,
          headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        });
        req.on('error', reject);
        req.on('response', (res) => {
          let bytes = 0;
          res.on('data', (chunk) => (bytes += chunk.length));
          res.on('end', () => resolve({ status: res.statusCode, bytes }));
        });
        req.end(body);
      });
    await send(); // warm-up
    const before = cpuMs(service.pid);
    const started = performance.now();
    let last;
    for (let i = 0; i < REPEAT; i += 1) last = await send();
    const cpu = (cpuMs(service.pid) - before) / REPEAT;
    worst = Math.max(worst, cpu / items);
    rows.push({
      request: name,
      route: `${method} ${path.split('?')[0]}`,
      'body KiB': body === undefined ? 0 : Math.round(Buffer.byteLength(body) / 1024),
      status: last.status,
      'answer bytes': last.bytes,
      'CPU ms/request': Number(cpu.toFixed(1)),
      items,
      'wall ms/request': Number(((performance.now() - started) / REPEAT).toFixed(1)),
    });
  }
  console.log(`driver=${process.env.DATABASE_URL ? 'postgres' : 'pglite'} repeat=${REPEAT} node=${process.version}`);
  console.table(rows);
  console.log(`worst CPU per request (per stored item for batches): ${worst.toFixed(1)} ms (target <= ${TARGET_MS} ms)`);
  if (worst > TARGET_MS) targetMissed();
} finally {
  await service.stop();
}
