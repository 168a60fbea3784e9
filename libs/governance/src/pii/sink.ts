/**
 * What the detectors report to: the scanner's collector (detect.ts) implements it. A detector checks the shape and
 * the cheap checksum first, then asks for the score with its context, and runs an expensive validation (a phone
 * number's metadata) only when that score can pass.
 */
import { leftClear } from './chars.js';
import type { PiiEntity } from './entities.js';
import type { PhoneChecks } from './phone.js';

export interface Sink {
  readonly text: string;
  /** Bits (ENTITY_BIT) of the entities asked for. */
  readonly wanted: number;
  readonly minScore: number;
  /**
   * The start of the digit token being scanned when a value may start there although a number and a space (or comma)
   * stand before it (`Invoice 2024 4111111111111111`): the run read from that number found nothing covering the
   * token. −1 otherwise.
   */
  readonly clearStart: number;
  /** The phone validations of the call (budget and results), shared by the texts of one masked JSON value. */
  readonly phones: PhoneChecks;
  /** `base` adjusted by the context words around `text[start, end)` for the entity of `bit`. */
  score(bit: number, start: number, end: number, base: number): number;
  /** Reports a match with its final score (kept when at or above minScore). */
  add(entity: PiiEntity, start: number, end: number, score: number): void;
}

/** Whether a value may start at `start`: `leftClear`, or the token the scanner retries after a failed run. */
export function valueMayStart(text: string, start: number, sink: Sink): boolean {
  return start === sink.clearStart || leftClear(text, start);
}
