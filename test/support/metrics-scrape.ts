import { createRequire } from 'node:module';
import { expect } from 'vitest';
import type { TestContext } from './app.js';

/** A family of an exposition as parse-prometheus-text-format reads it (only what these tests use). */
interface ParsedFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: { value?: string; labels?: Record<string, string> }[];
}

// The package has no types and ships CommonJS as its main entry.
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => ParsedFamily[];

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One exposition, read by the parser: its families' types, and every sample with its labels. */
export class Exposition {
  readonly types: ReadonlyMap<string, ParsedFamily['type']>;
  readonly samples: readonly Sample[];

  constructor(readonly text: string) {
    this.types = new Map(parse(text).map((family) => [family.name, family.type]));
    // The parser folds a labelled histogram's label sets into one entry; without the TYPE lines every line is a
    // sample of its own name (`_bucket`, `_sum`, `_count`) with its labels, which is what the tests read.
    const untyped = text
      .split('\n')
      .filter((line) => !line.startsWith('# TYPE '))
      .join('\n');
    this.samples = parse(untyped).flatMap((family) =>
      family.metrics.map((m) => ({ name: family.name, labels: m.labels ?? {}, value: Number(m.value) })),
    );
  }

  /** Whether the exposition declares this family (a `# TYPE` line), with samples or none yet. */
  has(name: string): boolean {
    return this.types.has(name);
  }

  /** The value of the sample of a name with exactly these labels (none: the unlabelled one), if there is one. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const wanted = Object.entries(labels);
    return this.samples.find(
      (s) =>
        s.name === name &&
        Object.keys(s.labels).length === wanted.length &&
        wanted.every(([k, v]) => s.labels[k] === v),
    )?.value;
  }

  /** The samples of a name whose labels include `labels`. */
  select(name: string, labels: Record<string, string> = {}): Sample[] {
    const wanted = Object.entries(labels);
    return this.samples.filter((s) => s.name === name && wanted.every(([k, v]) => s.labels[k] === v));
  }

  /** The sum of the samples of a name whose labels include `labels` (0 when there is none). */
  sum(name: string, labels: Record<string, string> = {}): number {
    return this.select(name, labels).reduce((total, s) => total + s.value, 0);
  }

  /**
   * A labelled series's values by its labels (joined as `k=v,k=v` in the order given), for comparing two scrapes:
   * `counts('governance_http_request_duration_seconds_count', ['method', 'route', 'status_class'])`.
   */
  counts(name: string, keys: readonly string[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const s of this.select(name)) {
      const key = keys.map((k) => `${k}=${s.labels[k] ?? ''}`).join(',');
      out.set(key, (out.get(key) ?? 0) + s.value);
    }
    return out;
  }
}

/** What grew from `before` to `after`, by key (keys that did not grow are left out). */
export function growth(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta !== 0) out[key] = delta;
  }
  return out;
}

/** GET /metrics on the main port with the token: 200 in the text format, read by the parser. */
export async function scrape(ctx: TestContext, token: string): Promise<Exposition> {
  // The response hooks of the requests before run as their responses finish: let them.
  await new Promise((resolve) => setImmediate(resolve));
  const res = await ctx.get('/metrics', { token });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return new Exposition(res.body);
}
