import { Injectable, type OnModuleDestroy } from '@nestjs/common';

/** Above this delay the loop is reported slow: the health check's own budget is 100 ms. */
export const SLOW_EVENT_LOOP_MS = 100;
const TICK_MS = 10;
/** The report covers the last WINDOW_SECONDS seconds, kept as the worst delay of each second. */
const WINDOW_SECONDS = 10;
/**
 * How long after the server is ready the loop is not judged yet: start-up's deferred work still holds it then (on
 * PGlite, stalls of 0.2 to 0.5 s within the first second after listening, on a loaded 2-core machine).
 */
export const EVENT_LOOP_SETTLING_MS = 3_000;

/**
 * `starting` until EVENT_LOOP_SETTLING_MS after the server is ready to listen; then `slow` when the loop ran more
 * than SLOW_EVENT_LOOP_MS late in the last ten seconds, else `ok`.
 */
export type EventLoopCheck = 'starting' | 'ok' | 'slow';

/**
 * How late the event loop runs, over the last ten seconds: a loop kept busy by CPU work answers everything late,
 * which the health check reports as its own condition instead of mistaking it for a slow database. A timer ticks
 * every 10 ms and records how late it ran; a reading also counts the time since the last tick, so a stall that has
 * just ended is reported before the timer has caught up with it.
 *
 * Measuring starts when the server is ready to listen (`start()`), not when the process does: start-up blocks the
 * loop for seconds (migrations, on PGlite in this very thread) and that is not load. What the loop does in the
 * settling window after it is shown (`eventLoopDelayMs`) but not judged, and left out of the window once it ends.
 */
@Injectable()
export class EventLoopMonitor implements OnModuleDestroy {
  private readonly worstPerSecond = new Float64Array(WINDOW_SECONDS);
  private second = 0;
  private lastTick = 0;
  private timer: NodeJS.Timeout | undefined;
  /** When the settling window ends (performance.now()); undefined before `start()` and once it has ended. */
  private settlesAt: number | undefined;

  /** Starts measuring, from an empty window. Called once the server is ready to listen; again, it starts over. */
  start(): void {
    const now = performance.now();
    this.worstPerSecond.fill(0);
    this.second = Math.floor(now / 1000);
    this.lastTick = now;
    this.settlesAt = now + EVENT_LOOP_SETTLING_MS;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), TICK_MS).unref();
  }

  private tick(): void {
    const now = performance.now();
    this.record(now, now - this.lastTick - TICK_MS);
    this.lastTick = now;
  }

  private record(now: number, delayMs: number): void {
    if (this.settlesAt !== undefined && now >= this.settlesAt) {
      // The settling window has ended: what the loop did during it is forgotten, a stall across its end counts
      // from the end.
      delayMs = Math.min(delayMs, now - this.settlesAt);
      this.settlesAt = undefined;
      this.worstPerSecond.fill(0);
    }
    const second = Math.floor(now / 1000);
    // Seconds that passed without a tick (a long stall) start empty.
    for (let s = Math.max(this.second + 1, second - WINDOW_SECONDS + 1); s <= second; s += 1) {
      this.worstPerSecond[s % WINDOW_SECONDS] = 0;
    }
    this.second = Math.max(this.second, second);
    const slot = second % WINDOW_SECONDS;
    this.worstPerSecond[slot] = Math.max(this.worstPerSecond[slot]!, delayMs);
  }

  /** The longest delay of the event loop in the last ten seconds, in whole milliseconds; 0 before `start()`. */
  maxDelayMs(): number {
    if (!this.timer) return 0;
    const now = performance.now();
    this.record(now, now - this.lastTick - TICK_MS);
    return Math.max(0, Math.round(Math.max(...this.worstPerSecond)));
  }

  /** The health check's reading: the state and the delay it is based on. */
  check(): { eventLoop: EventLoopCheck; eventLoopDelayMs: number } {
    const eventLoopDelayMs = this.maxDelayMs();
    if (!this.timer || this.settlesAt !== undefined) return { eventLoop: 'starting', eventLoopDelayMs };
    return { eventLoop: eventLoopDelayMs > SLOW_EVENT_LOOP_MS ? 'slow' : 'ok', eventLoopDelayMs };
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
