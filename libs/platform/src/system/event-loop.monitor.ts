import { Injectable, type OnModuleDestroy } from '@nestjs/common';

/** Above this delay the loop is reported slow: the health check's own budget is 100 ms. */
export const SLOW_EVENT_LOOP_MS = 100;
const TICK_MS = 10;
/** The report covers the last WINDOW_SECONDS seconds, kept as the worst delay of each second. */
const WINDOW_SECONDS = 10;

/**
 * How late the event loop runs, over the last ten seconds: a loop kept busy by CPU work answers everything late,
 * which the health check reports as its own condition instead of mistaking it for a slow database. A timer ticks
 * every 10 ms and records how late it ran; a reading also counts the time since the last tick, so a stall that has
 * just ended is reported before the timer has caught up with it.
 */
@Injectable()
export class EventLoopMonitor implements OnModuleDestroy {
  private readonly worstPerSecond = new Float64Array(WINDOW_SECONDS);
  private second = Math.floor(performance.now() / 1000);
  private lastTick = performance.now();
  private readonly timer = setInterval(() => this.tick(), TICK_MS).unref();

  private tick(): void {
    const now = performance.now();
    this.record(now, now - this.lastTick - TICK_MS);
    this.lastTick = now;
  }

  private record(now: number, delayMs: number): void {
    const second = Math.floor(now / 1000);
    // Seconds that passed without a tick (a long stall) start empty.
    for (let s = Math.max(this.second + 1, second - WINDOW_SECONDS + 1); s <= second; s += 1) {
      this.worstPerSecond[s % WINDOW_SECONDS] = 0;
    }
    this.second = Math.max(this.second, second);
    const slot = second % WINDOW_SECONDS;
    this.worstPerSecond[slot] = Math.max(this.worstPerSecond[slot]!, delayMs);
  }

  /** The longest delay of the event loop in the last ten seconds, in whole milliseconds. */
  maxDelayMs(): number {
    const now = performance.now();
    this.record(now, now - this.lastTick - TICK_MS);
    return Math.max(0, Math.round(Math.max(...this.worstPerSecond)));
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}
