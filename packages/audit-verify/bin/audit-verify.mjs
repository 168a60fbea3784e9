#!/usr/bin/env node
import process from 'node:process';
import { parseArgs } from 'node:util';
import { formatReport, InputError, printable, verifyAuditFiles } from '../src/index.mjs';

const USAGE = `Usage: audit-verify --export audit.ndjson [--checkpoints checkpoints.json ... --keys public-key.json ...]
                    [--trace trace.json ...] [--json]

Verifies an audit log export offline: the SHA-256 hash chain of its entries and, given checkpoints and the keys
that signed them, that the export contains every signed checkpoint (no rewrite, no truncation); given traces, that
each one's content is the content whose hash its latest audit entry records (intact, altered, erased, unhashed).

  --export FILE        the NDJSON export (GET /api/v1/audit/export); required
  --checkpoints FILE   signed checkpoints (GET /api/v1/audit/checkpoints, a JSON array, {checkpoints: [...]},
                       or NDJSON of checkpoints or audit.checkpoint webhook bodies); repeatable; needs --keys
  --keys FILE          public keys (GET /api/v1/audit/public-key, {keys: [...]}, an array of keys, or a PEM
                       public key); repeatable
  --trace FILE         traces to check against the export: GET /api/v1/traces/{id} (its answer or the bare
                       trace), a JSON array of traces, or NDJSON of them; repeatable
  --json               print one JSON object (with "ok" and "verdict") instead of text
  -h, --help           print this help

Exit codes: 0 everything verified, 1 a verification failed, 2 usage error or unreadable input.
`;

const write = (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);

/** Usage errors and unreadable input: exit code 2, the reason on stderr, still a FAILED verdict on stdout. */
function inputFailure(kind, reason, json) {
  const message = printable(reason);
  const verdict = `FAILED: ${kind === 'usage' ? 'usage' : 'input'}: ${message}`;
  process.stderr.write(`audit-verify: ${message}\n`);
  if (kind === 'usage') process.stderr.write(`\n${USAGE}`);
  write(json ? JSON.stringify({ ok: false, verdict, error: { kind, message } }) : verdict);
  process.exitCode = 2;
}

async function main(argv) {
  const json = argv.includes('--json');
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        export: { type: 'string', multiple: true },
        checkpoints: { type: 'string', multiple: true, default: [] },
        keys: { type: 'string', multiple: true, default: [] },
        trace: { type: 'string', multiple: true, default: [] },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    return inputFailure('usage', error.message, json);
  }
  if (values.help) {
    write(USAGE);
    return;
  }
  if (!values.export || values.export.length === 0)
    return inputFailure('usage', '--export is required', json);
  if (values.export.length > 1) return inputFailure('usage', '--export may be given once', json);
  if (values.checkpoints.length > 0 && values.keys.length === 0) {
    return inputFailure('usage', '--checkpoints needs --keys (the public keys that signed them)', json);
  }
  const empty = [...values.export, ...values.checkpoints, ...values.keys, ...values.trace].some(
    (path) => path === '',
  );
  if (empty) return inputFailure('usage', 'a file option is empty', json);

  let report;
  try {
    report = await verifyAuditFiles({
      exportPath: values.export[0],
      checkpointPaths: values.checkpoints,
      keyPaths: values.keys,
      tracePaths: values.trace,
    });
  } catch (error) {
    if (error instanceof InputError) return inputFailure('input', error.message, json);
    throw error;
  }
  write(json ? JSON.stringify(report) : formatReport(report).join('\n'));
  process.exitCode = report.ok ? 0 : 1;
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`audit-verify: unexpected error: ${error?.stack ?? error}\n`);
  process.stdout.write('FAILED: internal error\n');
  process.exitCode = 2;
});
