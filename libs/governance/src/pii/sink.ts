/**
 * What the detectors report to: the scanner's collector (detect.ts) implements it. A detector checks the shape and
 * the cheap checksum first, then asks for the score with its context, and runs an expensive validation (a phone
 * number's metadata) only when that score can pass.
 */
import type { PiiEntity } from './entities.js';

export interface Sink {
  readonly text: string;
  /** Bits (ENTITY_BIT) of the entities asked for. */
  readonly wanted: number;
  readonly minScore: number;
  /** `base` adjusted by the context words around `text[start, end)` for the entity of `bit`. */
  score(bit: number, start: number, end: number, base: number): number;
  /** Reports a match with its final score (kept when at or above minScore). */
  add(entity: PiiEntity, start: number, end: number, score: number): void;
}
