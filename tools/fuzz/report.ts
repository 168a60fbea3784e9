// What the fuzzer prints: the per-operation table, the failures grouped by kind with one reproducer each, and the
// summary line (never of the form `N passed, N failed`: CI reserves that line for its own total).
import type { CredKind } from './draft.js';
import type { OracleName } from './oracles.js';
import { formatReproducer, type ReproRequest } from './reproducer.js';

export interface OpStats {
  id: string;
  method: string;
  path: string;
  kinds: CredKind[];
  sent: number;
  byClass: Record<'2xx' | '3xx' | '4xx' | '5xx' | 'err', number>;
  failures: number;
}

export interface Failure {
  op: string;
  kind: CredKind;
  /** Position of the request in its batch (replay with the same seed and FUZZ_ONLY). */
  index: number;
  mutator: string;
  note: string;
  oracle: OracleName;
  message: string;
  status?: number;
  request: ReproRequest;
  responseExcerpt?: string;
}

export const statusClass = (status: number | undefined): keyof OpStats['byClass'] =>
  status === undefined
    ? 'err'
    : status >= 500
      ? '5xx'
      : status >= 400
        ? '4xx'
        : status >= 300
          ? '3xx'
          : '2xx';

export function table(rows: OpStats[]): string[] {
  const head = ['method', 'path', 'credentials', 'sent', '2xx', '3xx', '4xx', '5xx', 'err', 'failures'];
  const body = rows.map((r) => [
    r.method,
    r.path,
    r.kinds.join(','),
    String(r.sent),
    ...(['2xx', '3xx', '4xx', '5xx', 'err'] as const).map((c) => String(r.byClass[c])),
    r.failures ? String(r.failures) : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

/** Failures that are the same finding: same oracle, mutator and status, and the same message once numbers go. */
export function signature(f: Failure): string {
  const message = f.message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')
    .replace(/\d[\d,.]*/g, 'N');
  // An accepted request that must be refused: one finding per kind of refusal (the reason up to its colon).
  if (f.oracle === 'accepted')
    return [f.oracle, f.message.replace(/^.*must be refused: /, '').split(':')[0]].join('|');
  // A 5xx or a dropped connection on two operations is probably two bugs; other findings group across them.
  const where = f.oracle === '5xx' || f.oracle === 'socket' ? f.op : '';
  return [f.oracle, f.mutator, f.status ?? 'none', where, message].join('|');
}

export function groupFailures(failures: Failure[]): Failure[][] {
  const groups = new Map<string, Failure[]>();
  for (const f of failures) {
    const key = signature(f);
    const g = groups.get(key) ?? [];
    g.push(f);
    groups.set(key, g);
  }
  return [...groups.values()];
}

export function failureReport(failures: Failure[], base: string, secrets: Map<string, string>): string[] {
  const out: string[] = [];
  groupFailures(failures).forEach((group, n) => {
    const first = group[0]!;
    const ops = new Map<string, number>();
    for (const f of group) ops.set(`${f.op} [${f.kind}]`, (ops.get(`${f.op} [${f.kind}]`) ?? 0) + 1);
    out.push('');
    out.push(`#${n + 1} [${first.oracle}] ${first.message}`);
    out.push(`   sent by mutator ${first.mutator}: ${first.note}`);
    out.push(
      `   ${group.length} request(s) on ${ops.size} operation/credential pair(s): ${[...ops].map(([k, c]) => (c > 1 ? `${k} ×${c}` : k)).join('; ')}`,
    );
    if (first.responseExcerpt) out.push(`   answer: ${first.responseExcerpt}`);
    out.push(`   reproducer (${first.op} [${first.kind}], request ${first.index} of its batch):`);
    for (const line of formatReproducer(first.request, base, { secrets })) out.push(`   ${line}`);
  });
  return out;
}

export function summaryLine(
  clean: number,
  failing: number,
  requests: number,
  seed: number,
  driver: string,
): string {
  return `fuzz: ${clean} operations clean, ${failing} operations failing (${requests} requests, seed ${seed}, driver ${driver})`;
}
