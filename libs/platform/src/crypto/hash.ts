import { hash, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex, for high-entropy secrets (random tokens and keys) that are looked up by their hash. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Constant-time comparison of two strings. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
