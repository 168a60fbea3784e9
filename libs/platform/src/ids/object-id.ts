import { randomBytes, randomInt } from 'node:crypto';

const processUnique = randomBytes(5).toString('hex');
let counter = randomInt(0, 0xffffff);

/**
 * A 24-character lower-case hex identifier in object-identifier layout: 4-byte seconds since the epoch,
 * 5 random bytes fixed per process, and a 3-byte counter. Ids sort roughly by creation time.
 */
export function newId(now: number = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  const time = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + processUnique + counter.toString(16).padStart(6, '0');
}

/**
 * An identifier of the same layout whose 8 bytes after the time are fresh random bytes, for records a stranger may
 * name (organizations: `GET /auth/saml/metadata/:orgId`): from one id, no other can be guessed, as the process
 * bytes and counter of `newId` would let someone walk to its neighbours.
 */
export function newUnguessableId(now: number = Date.now()): string {
  const time = Math.floor(now / 1000)
    .toString(16)
    .padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}

export const OBJECT_ID_PATTERN = /^[0-9a-f]{24}$/;

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID_PATTERN.test(value);
}
