import { hash, verify } from '@node-rs/argon2';
import { registerDecorator, type ValidationOptions } from 'class-validator';

// OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
// algorithm 2 is Argon2id (the package's const enum cannot be imported under isolatedModules).
const ARGON2_OPTIONS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN_LENGTH = 10;
/** Bounded so that hashing cost stays bounded. */
export const PASSWORD_MAX_LENGTH = 128;

export function passwordPolicyViolation(password: string): string | undefined {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (!/[A-Z]/.test(password)) return 'password must contain an uppercase letter';
  if (!/[a-z]/.test(password)) return 'password must contain a lowercase letter';
  if (!/[0-9]/.test(password)) return 'password must contain a digit';
  return undefined;
}

/** class-validator rule for the password policy: at least 10 characters, upper case, lower case and a digit. */
export function IsStrongPassword(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isStrongPassword',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && passwordPolicyViolation(value) === undefined,
        defaultMessage: (args) =>
          typeof args?.value === 'string'
            ? (passwordPolicyViolation(args.value) ?? 'password is invalid')
            : 'password must be a string',
      },
    });
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

// A real hash of a random password: verifying against it when the account does not exist costs the same time.
let dummyHash: Promise<string> | undefined;

/** Constant-work verification: a missing account still runs one argon2 verification. */
export async function verifyPassword(
  passwordHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  dummyHash ??= hash('dummy-password-for-timing-Aa1', ARGON2_OPTIONS);
  const target = passwordHash ?? (await dummyHash);
  try {
    const ok = await verify(target, password);
    return ok && passwordHash !== null && passwordHash !== undefined;
  } catch {
    return false;
  }
}
