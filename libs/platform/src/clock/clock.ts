import { Injectable } from '@nestjs/common';

/** The one source of time. Tests replace it with a FixedClock to move past expiry and sunset dates. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  nowMs(): number {
    return this.now().getTime();
  }
}

/** A clock that stands still until told to move; used by tests instead of sleeping. */
export class FixedClock extends Clock {
  constructor(private current: Date = new Date()) {
    super();
  }

  override now(): Date {
    return new Date(this.current.getTime());
  }

  set(date: Date | string): void {
    this.current = new Date(date);
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
