import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script of the repository, without type declarations
import { dockerignore, durationMs, parseDockerfile, readStages, runtimePackages } from './dockerfile.mjs';

describe('the Dockerfile follower', () => {
  it('reads instructions across continuations and comments', () => {
    const text = ['# syntax=docker/dockerfile:1', 'FROM node:24-trixie-slim AS deps', 'RUN a \\', '  # inside', ' && b', 'CMD ["node", "x.js"]'].join('\n');
    expect(parseDockerfile(text)).toEqual([
      { op: 'FROM', args: 'node:24-trixie-slim AS deps', line: 2 },
      { op: 'RUN', args: 'a   && b', line: 3 },
      { op: 'CMD', args: '["node", "x.js"]', line: 6 },
    ]);
  });

  it("applies .dockerignore as Docker does: from the context's root, ** for any folders, [..] classes", () => {
    const ignored = dockerignore('node_modules\n**/dist\n*.log\n.env.*\n[ab].txt\n');
    expect(['node_modules/x/y.js', 'libs/a/dist/b.js', 'dist/c.js', 'x.log', '.env.local', 'a.txt'].filter(ignored)).toHaveLength(6);
    // Only at the root without **, and a class is a class.
    expect(['libs/node_modules/x.js', 'logs/x.log.txt', 'c.txt', '.env', 'README.md'].filter(ignored)).toEqual([]);
    expect(() => dockerignore('!keep')).toThrow(/exceptions/);
  });

  it('reads Docker durations', () => {
    expect(durationMs('30s')).toBe(30_000);
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('500ms')).toBe(500);
  });

  it("finds in the project's Dockerfile a non-root image on an LTS line, with tini, a health check and its packages", () => {
    const stages = readStages();
    const runtime = stages.at(-1);
    expect(stages.filter((s: { image: string }) => s.image.startsWith('node:')).map((s: { image: string }) => s.image)).toEqual([
      'node:24-trixie-slim',
      'node:24-trixie-slim',
    ]);
    const ops = runtime.instructions.map((i: { op: string; args: string }) => `${i.op} ${i.args}`);
    expect(ops).toContain('USER 10001:10001');
    expect(ops).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(ops.some((o: string) => o.startsWith('HEALTHCHECK '))).toBe(true);
    expect(runtimePackages()).toEqual(['chromium', 'fonts-liberation', 'fonts-dejavu-core', 'tini']);
  });
});
