import { accessSync, constants, mkdirSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Browser } from 'puppeteer-core';
import { APP_CONFIG, type AppConfig, AppError, ErrorCode, Semaphore, SemaphoreFullError } from '#platform';

/** Where Debian, Ubuntu, Alpine and the Chrome packages put the browser. */
export const SYSTEM_CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/lib/chromium/chromium',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/google-chrome',
];

/** Renders waiting for a free slot at most; beyond it the request answers 503 at once. */
const MAX_WAITING = 32;

/**
 * Flags for a headless browser that renders our own HTML and nothing else: no sandbox (containers run it as root),
 * no GPU, and none of the background traffic (component updates, sync, field trials) that a closed network refuses.
 */
const BASE_ARGS = [
  '--no-sandbox',
  '--disable-setuid-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--mute-audio',
  '--font-render-hinting=none',
];

/** The flags of @sparticuz/chromium that loosen the web's security model are left out: we render no web page. */
const UNSAFE_BUNDLED_ARGS = new Set(['--disable-web-security', '--allow-running-insecure-content']);

export interface LocatedChromium {
  path: string;
  source: 'CHROMIUM_PATH' | 'system' | 'bundled';
  args: string[];
}

export interface PdfOptions {
  footerTemplate: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const unavailable = (message: string): AppError =>
  new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, message, { headers: { 'Retry-After': '60' } });

/** The prefix of each browser launch's directory in the OS temporary directory. */
export const CHROMIUM_DIR_PREFIX = 'governance-chromium-';

/**
 * HTML to PDF through one headless Chromium per process (puppeteer-core), started on first use and started again
 * if it dies. At most `maxConcurrentRenders` pages render at once and the rest wait (up to MAX_WAITING); each render
 * has a timeout. The page runs no script and may load nothing: every request but the document itself is aborted.
 *
 * Each launch writes in a directory of its own under the OS temporary directory, removed once that browser has
 * exited however it ended (closed, crashed, killed, or failed to start): its profile, and Chromium's own temporary
 * files (the process singleton's socket directory, shared memory files under --disable-dev-shm-usage), which go
 * where the browser's TMPDIR says. Left to itself Chromium puts both in the temporary directory, and a killed
 * browser never removes them.
 */
@Injectable()
export class PdfRenderer implements OnApplicationShutdown {
  private readonly logger = new Logger('PdfRenderer');
  private browser: Promise<Browser> | null = null;
  private located: Promise<LocatedChromium | null> | null = null;
  private readonly slots: Semaphore;
  private closed = false;
  /** The launches' directories: each is removed when its browser exits, and all again at shutdown. */
  private readonly dirs = new Set<string>();
  /** Removes the directories if the process exits without shutting the application down. */
  private readonly removeAllOnExit = (): void => this.removeDirs();

  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'chromiumPath' | 'pdf'>) {
    this.slots = new Semaphore(config.pdf.maxConcurrentRenders, MAX_WAITING);
  }

  /** Where Chromium is: CHROMIUM_PATH alone when set, else the system paths, else the bundled package's. */
  locate(): Promise<LocatedChromium | null> {
    this.located ??= this.find().catch((err: unknown) => {
      this.logger.warn({ err }, 'Looking for Chromium failed');
      this.located = null;
      return null;
    });
    return this.located;
  }

  private async find(): Promise<LocatedChromium | null> {
    if (this.config.chromiumPath) {
      const path = this.config.chromiumPath;
      return executable(path) ? { path, source: 'CHROMIUM_PATH', args: BASE_ARGS } : null;
    }
    for (const source of this.config.pdf.chromiumSources) {
      if (source === 'system') {
        const path = SYSTEM_CHROMIUM_PATHS.find(executable);
        if (path) return { path, source, args: BASE_ARGS };
      } else {
        const bundled = await bundledChromium();
        if (bundled) return bundled;
      }
    }
    return null;
  }

  async render(html: string, options: PdfOptions): Promise<Buffer> {
    if (this.closed) throw unavailable('The service is shutting down');
    try {
      await this.slots.acquire();
    } catch (err) {
      if (err instanceof SemaphoreFullError)
        throw unavailable('Too many PDF renders are waiting; try again shortly');
      throw err;
    }
    try {
      const browser = await this.ensureBrowser();
      return await this.withTimeout(browser, html, options);
    } finally {
      this.slots.release();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    const browser = this.browser;
    this.browser = null;
    if (browser) await (await browser.catch(() => null))?.close().catch(() => undefined);
    // After the browser's exit; and a directory whose removal raced with a dying browser's last writes goes now.
    this.removeDirs();
    process.off('exit', this.removeAllOnExit);
  }

  /** Registered after Puppeteer's own exit listener, which kills the browser: the directories go after it. */
  private removeOnExit(): void {
    if (!this.closed && process.listeners('exit').every((l) => l !== this.removeAllOnExit))
      process.on('exit', this.removeAllOnExit);
  }

  private removeDirs(): void {
    for (const dir of this.dirs) removeDir(dir);
    this.dirs.clear();
  }

  private async withTimeout(browser: Browser, html: string, options: PdfOptions): Promise<Buffer> {
    const page = await browser.newPage();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(unavailable('The PDF did not render in time; try a shorter period')),
        this.config.pdf.renderTimeoutMs,
      );
    });
    try {
      const rendered = (async () => {
        await page.setJavaScriptEnabled(false);
        await page.setRequestInterception(true);
        page.on('request', (request) => {
          const url = request.url();
          if (url === 'about:blank' || url.startsWith('data:')) void request.continue();
          else void request.abort('blockedbyclient');
        });
        await page.setContent(html, { waitUntil: 'load', timeout: this.config.pdf.renderTimeoutMs });
        const pdf = await page.pdf({
          format: 'A4',
          printBackground: true,
          preferCSSPageSize: true,
          displayHeaderFooter: true,
          headerTemplate: '<div></div>',
          footerTemplate: options.footerTemplate,
          tagged: true,
          outline: true,
          timeout: this.config.pdf.renderTimeoutMs,
        });
        return Buffer.from(pdf);
      })();
      // When the timeout wins, the render fails later as its page closes: that failure is expected, not unhandled.
      rendered.catch(() => undefined);
      return await Promise.race([rendered, timeout]);
    } finally {
      clearTimeout(timer);
      await page.close().catch(() => undefined);
    }
  }

  private ensureBrowser(): Promise<Browser> {
    this.browser ??= this.launch().catch((err: unknown) => {
      this.browser = null;
      throw err;
    });
    return this.browser;
  }

  private async launch(): Promise<Browser> {
    const chromium = await this.locate();
    if (!chromium) {
      throw unavailable(
        this.config.chromiumPath
          ? `No Chromium at CHROMIUM_PATH (${this.config.chromiumPath}); point CHROMIUM_PATH at a Chromium or Chrome executable`
          : 'No Chromium found to render the PDF: install Chromium or set CHROMIUM_PATH to a Chromium or Chrome executable',
      );
    }
    const { default: puppeteer } = await import('puppeteer-core');
    const dir = await mkdtemp(join(tmpdir(), CHROMIUM_DIR_PREFIX));
    this.dirs.add(dir);
    let browser: Browser;
    try {
      const userDataDir = join(dir, 'profile');
      const tmp = join(dir, 'tmp');
      await mkdir(tmp);
      browser = await puppeteer.launch({
        executablePath: chromium.path,
        args: chromium.args,
        headless: true,
        timeout: 30_000,
        userDataDir,
        // Read at launch: the bundled package sets its font and library paths in this process's environment.
        env: { ...process.env, TMPDIR: tmp },
      });
    } catch (err) {
      // Puppeteer kills a browser that did not start without waiting for it: shutdown removes the directory
      // again, should the browser have written in it meanwhile.
      removeDir(dir);
      this.removeOnExit();
      this.located = null;
      this.logger.warn({ err, path: chromium.path, source: chromium.source }, 'Chromium did not start');
      throw unavailable(
        `Chromium at ${chromium.path} did not start; set CHROMIUM_PATH to a working Chromium or Chrome executable`,
      );
    }
    this.logger.log({ path: chromium.path, source: chromium.source }, 'Chromium started for PDF rendering');
    this.removeOnExit();
    const child = browser.process();
    child?.once('exit', () => {
      // The browser's own processes (zygote, GPU, renderers) outlive a killed browser for a moment: they go first.
      // Puppeteer started it as the leader of its own process group.
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group has gone already.
      }
      removeDir(dir);
    });
    browser.on('disconnected', () => {
      // A crashed or killed browser is replaced on the next render.
      if (this.browser && !this.closed) {
        this.logger.warn('Chromium exited; the next render starts it again');
        this.browser = null;
      }
    });
    return browser;
  }
}

function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    new Logger('PdfRenderer').warn({ err, dir }, 'Could not remove the directory of a Chromium launch');
  }
}

/**
 * The Chromium inside the @sparticuz/chromium package (an optional dependency): unpacked from the package into the
 * temporary directory on first use, nothing downloaded. Absent when the package is not installed.
 */
async function bundledChromium(): Promise<LocatedChromium | null> {
  let mod: { default: { executablePath(): Promise<string>; args: string[] } };
  try {
    mod = (await import('@sparticuz/chromium')) as never;
  } catch {
    return null;
  }
  // The package unpacks into the temporary directory, and a second process that finds the file half-written would
  // start a broken browser: processes on one machine (replicas, test workers) take turns through a lock directory.
  const path = await withUnpackLock(() => mod.default.executablePath());
  if (!path || !executable(path)) return null;
  const args = [
    ...new Set([
      ...mod.default.args.filter((a) => !UNSAFE_BUNDLED_ARGS.has(a) && !a.startsWith('--headless')),
      ...BASE_ARGS,
    ]),
  ];
  return { path, source: 'bundled', args };
}

/** Longer than an unpack takes (about 2 s); a lock older than this was left by a process that died. */
const UNPACK_LOCK_STALE_MS = 120_000;

async function withUnpackLock<T>(run: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), 'governance-chromium-unpack.lock');
  const deadline = Date.now() + UNPACK_LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > UNPACK_LOCK_STALE_MS)
          rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile: try again.
      }
      if (Date.now() > deadline) throw new Error('Timed out waiting for another process to unpack Chromium');
      await sleep(100);
    }
  }
  try {
    return await run();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
