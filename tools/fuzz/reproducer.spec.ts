import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  curlCommand,
  displayValue,
  encodeBody,
  formatReproducer,
  shellQuote,
  shellWord,
  type ReproRequest,
} from './reproducer.js';

/**
 * Runs a curl command line in bash with `curl` replaced by a function that prints its arguments (NUL-separated)
 * and then the bytes it reads on stdin, so the test sees exactly what curl would have been given.
 */
function runCurl(command: string, env: Record<string, string> = {}): { args: string[]; stdin: Buffer } {
  const script = `curl() { printf '%s\\0' "$@"; printf '\\1\\1\\1'; cat; }\n${command}`;
  const out = execFileSync('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '', ...env } });
  const split = out.indexOf(Buffer.from([1, 1, 1]));
  const args = out.subarray(0, split).toString('latin1').split('\0').slice(0, -1);
  return { args, stdin: out.subarray(split + 3) };
}

const headerArgs = (args: string[]) => args.flatMap((a, i) => (args[i - 1] === '-H' ? [a] : []));

describe('shell quoting', () => {
  it("quotes printable text with single quotes and other bytes with $'…'", () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('caf\xe9')).toBe(`$'caf\\xe9'`);
    expect(shellQuote('')).toBe("''");
  });

  it('prints secrets as variables and long runs as printf', () => {
    const word = shellWord(`Bearer TOKEN-${'a'.repeat(100)}`, new Map([['TOKEN', 'JWT']]));
    expect(word).toContain('"$JWT"');
    expect(word).toContain(`printf '%*s' 100 ''`);
    expect(word).not.toContain('TOKEN');
  });
});

describe('curl command', () => {
  const req: ReproRequest = {
    method: 'POST',
    path: "/api/v1/agents/%00/x?q=it's&a=1&a=2",
    headers: [
      ['Authorization', 'Bearer SECRET'],
      ['Authorization', 'Bearer garbage'],
      ['X-Svc-Version', ''],
      ['X-Latin', 'caf\xe9'],
      ['X-Long', 'H'.repeat(20_000)],
      ['Content-Type', 'application/json; charset=latin1'],
    ],
    body: Buffer.concat([
      Buffer.from('{"name":"a'),
      Buffer.from([0xff, 0xfe, 0x00]),
      Buffer.from('","n":1e309}'),
    ]),
  };

  it('gives curl the exact method, URL, headers (duplicates, empty, Latin-1) and body bytes', () => {
    const command = curlCommand(req, { secrets: new Map([['SECRET', 'JWT']]) });
    const { args, stdin } = runCurl(command, { JWT: 'SECRET', BASE: 'http://h:1' });
    expect(args).toContain('--path-as-is');
    expect(args).toContain("http://h:1/api/v1/agents/%00/x?q=it's&a=1&a=2");
    expect(args[args.indexOf('-X') + 1]).toBe('POST');
    expect(headerArgs(args)).toEqual([
      'User-Agent:',
      'Accept:',
      'Authorization: Bearer SECRET',
      'Authorization: Bearer garbage',
      'X-Svc-Version;',
      'X-Latin: caf\xe9',
      `X-Long: ${'H'.repeat(20_000)}`,
      'Content-Type: application/json; charset=latin1',
    ]);
    expect(args.slice(-2)).toEqual(['--data-binary', '@-']);
    expect(stdin.equals(req.body!)).toBe(true);
    expect(command.length).toBeLessThan(1000);
  });

  it('gzips large bodies and still sends their exact bytes', () => {
    const body = Buffer.from(
      JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 0]))),
    );
    const command = curlCommand({ method: 'PATCH', path: '/p', headers: [], body });
    expect(command).toContain('gunzip');
    const { args, stdin } = runCurl(command);
    expect(stdin.equals(body)).toBe(true);
    // No Content-Type was sent: curl's default one is removed.
    expect(headerArgs(args)).toContain('Content-Type:');
  });

  it('sends no body flag when there is no body', () => {
    const command = curlCommand({ method: 'GET', path: '/api/v1/health', headers: [] });
    expect(command).not.toContain('--data-binary');
    expect(runCurl(command).stdin.length).toBe(0);
  });

  it('formats a readable reproducer', () => {
    const lines = formatReproducer(req, 'http://127.0.0.1:1234', { secrets: new Map([['SECRET', 'JWT']]) });
    expect(lines[0]).toBe("POST http://127.0.0.1:1234/api/v1/agents/%00/x?q=it's&a=1&a=2");
    expect(lines.join('\n')).toContain('X-Latin: caf\\xe9');
    expect(lines.join('\n')).toMatch(/body \(\d+ bytes, base64\): /);
    expect(lines.at(-1)!.trim().startsWith('printf %s')).toBe(true);
    expect(displayValue('x'.repeat(500), 10)).toBe('xxxxxxxxxx… (500 characters)');
  });

  it('encodes bodies as base64, gzipped above the threshold', () => {
    expect(encodeBody(Buffer.from('{}'))).toEqual({ base64: 'e30=', gzip: false });
    const big = encodeBody(Buffer.alloc(10_000, 0x41));
    expect(big.gzip).toBe(true);
    expect(gunzipSync(Buffer.from(big.base64, 'base64')).length).toBe(10_000);
  });
});
