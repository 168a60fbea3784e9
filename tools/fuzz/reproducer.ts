// Reproducers: a failing request as method, URL, headers and base64 body, and as a curl command line that sends
// the same bytes (duplicate headers, Latin-1 bytes, empty header values, raw body) to a service at $BASE.
import { gzipSync } from 'node:zlib';

export interface ReproRequest {
  method: string;
  path: string;
  headers: [string, string][];
  body?: Buffer;
}

export interface ReproOptions {
  /** Secret values (credentials) to print as shell variables: value → variable name. */
  secrets?: Map<string, string>;
  /** Bodies larger than this are gzipped before base64 (the command gunzips them). */
  gzipAbove?: number;
}

const PRINTABLE = /^[\x20-\x7e]*$/;

/** Quotes a literal for bash: '…' when printable, else $'…' with \xHH escapes (exact bytes, Latin-1). */
export function shellQuote(text: string): string {
  if (text === '') return "''";
  if (PRINTABLE.test(text)) return `'${text.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (ch === "'" || ch === '\\') out += `\\${ch}`;
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch; // not sendable in a header anyway
  }
  return `${out}'`;
}

/**
 * A shell word for `text`: secrets become "$VAR", runs of 64 or more of one printable character become
 * "$(printf …)", the rest is quoted literally. The parts are concatenated with no space, so they form one word.
 */
export function shellWord(text: string, secrets: Map<string, string> = new Map()): string {
  const parts: string[] = [];
  let literal = '';
  const flush = () => {
    if (literal) parts.push(shellQuote(literal));
    literal = '';
  };
  let i = 0;
  outer: while (i < text.length) {
    for (const [value, name] of secrets) {
      if (value && text.startsWith(value, i)) {
        flush();
        parts.push(`"$${name}"`);
        i += value.length;
        continue outer;
      }
    }
    const ch = text[i]!;
    let run = 1;
    while (text[i + run] === ch) run++;
    if (run >= 64 && /[\x21-\x7e]/.test(ch) && ch !== "'" && ch !== '\\') {
      flush();
      parts.push(`"$(printf '%*s' ${run} '' | tr ' ' ${shellQuote(ch)})"`);
      i += run;
      continue;
    }
    literal += ch;
    i++;
  }
  flush();
  return parts.length === 0 ? "''" : parts.join('');
}

/** The body as base64, gzipped first when large; `gzip` says which. */
export function encodeBody(body: Buffer, gzipAbove = 4096): { base64: string; gzip: boolean } {
  if (body.length > gzipAbove) return { base64: gzipSync(body, { level: 9 }).toString('base64'), gzip: true };
  return { base64: body.toString('base64'), gzip: false };
}

/** A bash command that sends exactly this request to "${BASE:-http://127.0.0.1:3000}". */
export function curlCommand(req: ReproRequest, opts: ReproOptions = {}): string {
  const secrets = opts.secrets ?? new Map<string, string>();
  const args = ['curl', '-sS', '-i', '--path-as-is', '-g', '-X', shellQuote(req.method)];
  args.push(`"\${BASE:-http://127.0.0.1:3000}"${shellWord(req.path, secrets)}`);
  // curl's own defaults, removed so that only the request's headers go out (Host and Content-Length stay).
  args.push("-H 'User-Agent:'", "-H 'Accept:'");
  const names = new Set(req.headers.map(([h]) => h.toLowerCase()));
  for (const [name, value] of req.headers) {
    if (name.toLowerCase() === 'content-length' || name.toLowerCase() === 'host') continue;
    // `-H 'X:'` would remove X; `-H 'X;'` sends it empty.
    args.push('-H', value === '' ? shellQuote(`${name};`) : shellWord(`${name}: ${value}`, secrets));
  }
  const hasBody = req.body !== undefined && req.body.length > 0;
  if (hasBody && !names.has('content-type')) args.push("-H 'Content-Type:'");
  if (!hasBody) return args.join(' ');
  args.push('--data-binary', '@-');
  const { base64, gzip } = encodeBody(req.body!, opts.gzipAbove);
  return `printf %s ${shellQuote(base64)} | base64 -d${gzip ? ' | gunzip' : ''} | ${args.join(' ')}`;
}

/** Header values as printed in a report: long ones shortened, non-ASCII bytes as \xHH. */
export function displayValue(value: string, max = 160): string {
  let out = '';
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    out += code >= 0x20 && code <= 0x7e ? ch : `\\x${code.toString(16).padStart(2, '0')}`;
  }
  return out.length > max ? `${out.slice(0, max)}… (${value.length.toLocaleString('en')} characters)` : out;
}

/** The lines of a reproducer: request line, headers, body, curl. */
export function formatReproducer(req: ReproRequest, base: string, opts: ReproOptions = {}): string[] {
  const lines = [`${req.method} ${base}${displayValue(req.path, 300)}`];
  for (const [name, value] of req.headers) lines.push(`  ${name}: ${displayValue(value)}`);
  if (req.body && req.body.length > 0) {
    const { base64, gzip } = encodeBody(req.body, opts.gzipAbove);
    const shown =
      base64.length > 400
        ? `${base64.slice(0, 400)}… (${base64.length.toLocaleString('en')} characters in the curl line)`
        : base64;
    lines.push(
      `  body (${req.body.length.toLocaleString('en')} bytes${gzip ? ', gzip then base64' : ', base64'}): ${shown}`,
    );
  }
  lines.push(`  ${curlCommand(req, opts)}`);
  return lines;
}
