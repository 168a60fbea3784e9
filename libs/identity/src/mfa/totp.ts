import { generateSecret, generateURI, verify } from 'otplib';

/** RFC 6238 parameters every common authenticator app uses: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const TOTP_ISSUER = 'Governance Service';

const TOTP_CODE = /^\d{6}$/;

/** A new random secret: 20 bytes (160 bits, RFC 4226's recommendation), Base32-encoded. */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The `otpauth://totp/...` URI an authenticator app reads from the QR code. */
export function totpUri(secret: string, account: string): string {
  return generateURI({
    issuer: TOTP_ISSUER,
    label: account,
    secret,
    algorithm: 'sha1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
  });
}

/** Whether the input has the shape of a TOTP code (six digits); anything else may be a backup code. */
export function isTotpCode(code: string): boolean {
  return TOTP_CODE.test(code);
}

/**
 * The time step a code belongs to when it is valid at `nowMs` within one step either side (clock drift
 * between the server and the phone), or undefined. The caller still has to refuse a step already used.
 * Time comes from the caller (the injectable clock), never from Date.now().
 */
export async function matchTotpStep(
  secret: string,
  code: string,
  nowMs: number,
): Promise<number | undefined> {
  if (!isTotpCode(code)) return undefined;
  try {
    const result = await verify({
      secret,
      token: code,
      algorithm: 'sha1',
      digits: TOTP_DIGITS,
      period: TOTP_PERIOD_SECONDS,
      epoch: Math.floor(nowMs / 1000),
      // ±30 s around now covers exactly the previous, the current and the next step.
      epochTolerance: TOTP_PERIOD_SECONDS,
    });
    // The functional API's result type also covers HOTP, which has no time step.
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  } catch {
    // A malformed secret or token: not a valid code.
    return undefined;
  }
}
