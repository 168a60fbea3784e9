import { Injectable } from '@nestjs/common';
import type { Counter } from 'prom-client';
import { Metrics } from './metrics.js';

/** How a sign-in ended: its last step (a password or a link followed by a TOTP code is an `mfa` sign-in). */
export const SIGN_IN_METHODS = ['password', 'magic_link', 'social', 'oidc', 'saml', 'mfa'] as const;
export type SignInMethod = (typeof SIGN_IN_METHODS)[number];

interface Incrementer {
  inc(value?: number): void;
}

/**
 * Sign-ins by method and result, and wrong second-factor codes. Every series starts at 0, so that a rate of
 * failures exists before the first one (prom-client starts an unlabelled counter at 0 itself). A step that answers with an MFA challenge is neither a success nor a
 * failure: the MFA step that follows counts.
 */
@Injectable()
export class SignInMetrics {
  private readonly outcomes: Record<SignInMethod, { success: Incrementer; failure: Incrementer }>;
  private readonly mfaFailures: Counter;

  constructor(metrics: Metrics) {
    const logins = metrics.counter({
      name: 'governance_logins_total',
      help: 'Sign-ins, by method (the step that ended them) and result.',
      labelNames: ['method', 'result'],
    });
    const child = (method: SignInMethod, result: 'success' | 'failure') => {
      const counter = logins.labels(method, result);
      counter.inc(0);
      return counter;
    };
    this.outcomes = Object.fromEntries(
      SIGN_IN_METHODS.map((method) => [
        method,
        { success: child(method, 'success'), failure: child(method, 'failure') },
      ]),
    ) as SignInMetrics['outcomes'];
    this.mfaFailures = metrics.counter({
      name: 'governance_mfa_failures_total',
      help: 'Wrong TOTP or backup codes (the sign-in step, and the MFA routes that ask for a code again).',
    });
  }

  succeeded(method: SignInMethod): void {
    this.outcomes[method].success.inc();
  }

  failed(method: SignInMethod): void {
    this.outcomes[method].failure.inc();
  }

  wrongMfaCode(): void {
    this.mfaFailures.inc();
  }

  /**
   * Counts one sign-in attempt as it settles: a session opened is a success, a refusal a failure (an error with a
   * 4xx `status`, or one `refused` recognises, such as a provider's failure); a server error (5xx, or an error
   * without a status) is neither, and an MFA challenge waits for its step.
   */
  async attempt<T>(
    method: SignInMethod,
    signIn: Promise<T>,
    refused: (err: unknown) => boolean = () => false,
  ): Promise<T> {
    let result: T;
    try {
      result = await signIn;
    } catch (err) {
      if (isClientError(err) || refused(err)) this.failed(method);
      throw err;
    }
    if (!isMfaChallenge(result)) this.succeeded(method);
    return result;
  }
}

function isClientError(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

/** The answers of a first step that asks for the second: `{ mfaRequired: true }`, or a hand-off of kind `mfa`. */
function isMfaChallenge(result: unknown): boolean {
  if (typeof result !== 'object' || result === null) return false;
  const { mfaRequired, kind } = result as { mfaRequired?: unknown; kind?: unknown };
  return mfaRequired === true || kind === 'mfa';
}
