// JSON text with exact bytes spliced in: `1e309`, a raw invalid UTF-8 sequence, an unescaped control character.
// A generated value holds Raw markers where such bytes go; `encodeJson` serialises the rest with JSON.stringify
// (which escapes lone surrogates and NUL as `\ud800` and `\u0000`, as a hostile client would send them).

export class Raw {
  constructor(
    readonly bytes: Buffer,
    readonly label: string,
  ) {}

  static text(text: string, label = text): Raw {
    return new Raw(Buffer.from(text, 'latin1'), label);
  }
}

const MARK = (n: number) => `@@fuzz-raw-${n}@@`;

/** Serialises `value` as JSON, replacing each Raw by its bytes (in place of the JSON value it stands for). */
export function encodeJson(value: unknown): Buffer {
  const raws: Raw[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Raw) {
      raws.push(v);
      return MARK(raws.length - 1);
    }
    return v;
  });
  if (text === undefined) return Buffer.alloc(0);
  if (raws.length === 0) return Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let rest = text;
  raws.forEach((raw, n) => {
    const quoted = `"${MARK(n)}"`;
    const at = rest.indexOf(quoted);
    if (at < 0) return;
    parts.push(Buffer.from(rest.slice(0, at), 'utf8'), raw.bytes);
    rest = rest.slice(at + quoted.length);
  });
  parts.push(Buffer.from(rest, 'utf8'));
  return Buffer.concat(parts);
}

/** Whether a value holds any Raw marker. */
export function hasRaw(value: unknown): boolean {
  if (value instanceof Raw) return true;
  if (Array.isArray(value)) return value.some(hasRaw);
  if (value && typeof value === 'object') return Object.values(value).some(hasRaw);
  return false;
}

/** A deep copy of a JSON value (Raw markers are kept as they are). */
export function cloneJson<T>(value: T): T {
  if (value instanceof Raw) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = cloneJson(v);
    return out as T;
  }
  return value;
}

export type PathKey = string | number;

/** Sets the value at `path` in a JSON value (a copy); `undefined` deletes an object member. */
export function setAt(root: unknown, path: PathKey[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = cloneJson(root);
  let node = copy as Record<PathKey, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<PathKey, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined && !Array.isArray(node)) delete node[last];
  else node[last] = value;
  return copy;
}

export function getAt(root: unknown, path: PathKey[]): unknown {
  let node = root;
  for (const key of path) node = (node as Record<PathKey, unknown> | null | undefined)?.[key];
  return node;
}

/** `a.b[0].c`: how a path is written in notes. */
export function pathText(path: PathKey[]): string {
  if (path.length === 0) return '(body)';
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}
