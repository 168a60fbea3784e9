/**
 * The one form an e-mail address is stored and compared in: Unicode NFKC (so that a full-width or ligature
 * look-alike of an address is that address), trimmed, lower-cased.
 */
export function normaliseEmail(value: string): string {
  return value.normalize('NFKC').trim().toLowerCase();
}

/** The class-transformer form of `normaliseEmail` for request DTOs (anything but a string is left to validation). */
export const emailTransform = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? normaliseEmail(value) : value;
