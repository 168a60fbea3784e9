import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Browser } from 'puppeteer-core';
import type { AppConfig } from '#platform';
import { CHROMIUM_DIR_PREFIX, PdfRenderer } from '../libs/compliance/src/reports/pdf-renderer.js';
import { type Registered, TestContext, testConfig } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

const REPORT = '/api/v1/reports/compliance';

/**
 * An application whose PDF renders see a temporary directory of their own (TMPDIR, which os.tmpdir() and Chromium
 * read), so that what other processes leave in the shared one cannot blur the count. Chromium is located first:
 * the bundled one unpacks into the shared temporary directory, once for every process, as in production.
 */
async function isolated(config: Partial<AppConfig> = {}) {
  const ctx = await TestContext.create({
    config: {
      ...config,
      userRateLimits: { ...testConfig().userRateLimits, compliancePdf: { max: 100, windowMs: 3600_000 } },
    },
  });
  const owner: Registered = await ctx.register({ organizationName: 'Temporary files' });
  const renderer = ctx.app.get(PdfRenderer);
  await renderer.locate();
  const own = mkdtempSync(join(tmpdir(), 'pdf-temp-files-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = own;
  const entries = () => readdirSync(own).sort();
  return {
    ctx,
    renderer: renderer as unknown as { browser: Promise<Browser> | null },
    entries,
    render: () => ctx.get(REPORT, { token: owner.token }),
    /** Closes the application and gives the temporary directory back; what Chromium left there, if anything. */
    close: async () => {
      try {
        await ctx.close();
        return entries();
      } finally {
        if (previous === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = previous;
        rmSync(own, { recursive: true, force: true });
      }
    },
  };
}

describe('Chromium’s temporary files', () => {
  let current: Awaited<ReturnType<typeof isolated>> | undefined;
  afterEach(async () => {
    await current?.close().catch(() => undefined);
    current = undefined;
  });

  it('keeps a launch’s profile and temporary files in one directory, removed when the browser closes', async () => {
    const app = (current = await isolated());
    expect((await app.render()).statusCode).toBe(200);
    const launched = app.entries();
    expect(launched).toEqual([expect.stringMatching(new RegExp(`^${CHROMIUM_DIR_PREFIX}`))]);
    const dir = join(tmpdir(), launched[0]!);
    expect(readdirSync(dir).sort()).toEqual(['profile', 'tmp']);
    // Chromium's process singleton keeps its socket in a temporary directory of its own (the headless shell
    // bundled in @sparticuz/chromium has none): TMPDIR put it inside the launch's directory.
    const socket = join(dir, 'profile', 'SingletonSocket');
    if (existsSync(socket)) expect(readlinkSync(socket).startsWith(join(dir, 'tmp'))).toBe(true);
    // The browser serves the next render from the same directory.
    expect((await app.render()).statusCode).toBe(200);
    expect(app.entries()).toEqual(launched);
    current = undefined;
    expect(await app.close()).toEqual([]);
  });

  it('leaves nothing after a render that did not finish in time', async () => {
    const app = (current = await isolated({ pdf: { ...testConfig().pdf, renderTimeoutMs: 1 } }));
    const res = await app.render();
    expect(expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE').error).toContain('did not render in time');
    // The browser lives on for the next render, in its launch's directory and nowhere else.
    expect(app.entries()).toEqual([expect.stringMatching(new RegExp(`^${CHROMIUM_DIR_PREFIX}`))]);
    current = undefined;
    expect(await app.close()).toEqual([]);
  });

  it('removes a killed browser’s directory at once, and the next launch writes in a new one', async () => {
    const app = (current = await isolated());
    expect((await app.render()).statusCode).toBe(200);
    const [first] = app.entries();
    const browser = await app.renderer.browser!;
    const died = new Promise((resolve) => browser.once('disconnected', resolve));
    browser.process()!.kill('SIGKILL');
    await died;
    await vi.waitFor(() => expect(app.entries()).toEqual([]), { timeout: 5_000, interval: 50 });
    expect((await app.render()).statusCode).toBe(200);
    const second = app.entries();
    expect(second).toHaveLength(1);
    expect(second).not.toContain(first);
    current = undefined;
    expect(await app.close()).toEqual([]);
  });

  it('removes the directory of a browser that did not start', async () => {
    // Node refuses Chromium's flags and exits at once.
    const app = (current = await isolated({ chromiumPath: process.execPath }));
    const res = await app.render();
    expect(expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE').error).toContain('did not start');
    expect(app.entries()).toEqual([]);
    current = undefined;
    expect(await app.close()).toEqual([]);
  });
});
