import { describe, expect, it } from 'vitest';
import { AppError } from '../http/app-error.js';
import { Metrics } from './metrics.js';
import { SignInMetrics } from './sign-in-metrics.js';

async function logins(metrics: Metrics): Promise<Record<string, number>> {
  const { values } = await metrics.registry.getSingleMetric('governance_logins_total')!.get();
  return Object.fromEntries(
    values.filter((v) => v.value > 0).map((v) => [`${v.labels.method} ${v.labels.result}`, v.value]),
  );
}

describe('SignInMetrics.attempt', () => {
  it('counts a session as a success, and an MFA challenge as neither', async () => {
    const metrics = new Metrics();
    const signIns = new SignInMetrics(metrics);
    await signIns.attempt('password', Promise.resolve({ token: 't' }));
    await signIns.attempt('password', Promise.resolve({ mfaRequired: true, tempToken: 't' }));
    await signIns.attempt('oidc', Promise.resolve({ kind: 'mfa', tempToken: 't' }));
    await signIns.attempt('social', Promise.resolve({ kind: 'session', token: 't' }));
    expect(await logins(metrics)).toEqual({ 'password success': 1, 'social success': 1 });
  });

  it("counts a refusal as a failure, and neither a server error nor another's error", async () => {
    const metrics = new Metrics();
    const signIns = new SignInMetrics(metrics);
    class ProviderFailure extends Error {}
    const settle = (method: 'password' | 'social', err: unknown) =>
      signIns.attempt(method, Promise.reject(err), (e) => e instanceof ProviderFailure).catch((e) => e);
    expect(await settle('password', AppError.unauthorized())).toBeInstanceOf(AppError);
    await settle('password', new AppError(503, 'SERVICE_UNAVAILABLE', 'down'));
    await settle('password', new Error('the database went away'));
    await settle('social', new ProviderFailure('state mismatch'));
    expect(await logins(metrics)).toEqual({ 'password failure': 1, 'social failure': 1 });
  });
});
