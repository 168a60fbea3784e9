import { spawnSync } from 'node:child_process';

/**
 * Prometheus's own binaries (Debian's `prometheus` package; .ci/run installs it). A test that needs one skips with a
 * note when it is missing on a developer's machine, and fails in CI, where a skipped check would pass unseen.
 */
export function prometheusBinary(name: 'prometheus' | 'promtool', skip: (note: string) => never): string {
  const probe = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (!probe.error && probe.status === 0) return name;
  const missing = `${name} is not installed (Debian's prometheus package: apt-get install prometheus)`;
  if (process.env.CI) throw new Error(`${missing}; CI needs it`);
  return skip(`${missing}; skipped outside CI`);
}
