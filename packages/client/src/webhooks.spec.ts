import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from './webhooks.js';

const OLD_SECRET = `whsec_${Buffer.from('o'.repeat(32)).toString('base64')}`;
const NEW_SECRET = `whsec_${Buffer.from('n'.repeat(32)).toString('base64')}`;
const NOW = new Date('2026-05-04T09:00:00.000Z');
const BODY = JSON.stringify({
  type: 'trace.flagged',
  timestamp: NOW.toISOString(),
  data: { traceId: 'a'.repeat(24), status: 'flagged' },
});

/** Headers as the service sends them, signed by the reference implementation with each secret. */
function signed(secrets: string[], { id = 'b'.repeat(24), at = NOW, body = BODY } = {}) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

describe('verifyWebhook', () => {
  it('returns the event with the webhook-id as its id when a standardwebhooks signature matches', async () => {
    const event = await verifyWebhook({
      body: BODY,
      headers: signed([NEW_SECRET]),
      secrets: NEW_SECRET,
      now: NOW,
    });
    expect(event).toEqual({ ...JSON.parse(BODY), id: 'b'.repeat(24) });
    expect(event.type).toBe('trace.flagged');
  });

  it('accepts a delivery signed with both secrets during a rotation with either secret, or both', async () => {
    const headers = signed([OLD_SECRET, NEW_SECRET]);
    for (const secrets of [OLD_SECRET, NEW_SECRET, [OLD_SECRET, NEW_SECRET], [NEW_SECRET, OLD_SECRET]]) {
      await expect(verifyWebhook({ body: BODY, headers, secrets, now: NOW })).resolves.toMatchObject({
        type: 'trace.flagged',
      });
    }
  });

  it('accepts the old and the new secret while a receiver has both configured', async () => {
    for (const signer of [OLD_SECRET, NEW_SECRET]) {
      await expect(
        verifyWebhook({ body: BODY, headers: signed([signer]), secrets: [NEW_SECRET, OLD_SECRET], now: NOW }),
      ).resolves.toMatchObject({ id: 'b'.repeat(24) });
    }
  });

  it('throws WebhookVerificationError for another secret, a changed body, id or timestamp', async () => {
    const headers = signed([OLD_SECRET]);
    const cases = [
      { body: BODY, headers, secrets: NEW_SECRET },
      { body: BODY.replace('flagged', 'approved'), headers, secrets: OLD_SECRET },
      { body: BODY, headers: { ...headers, 'webhook-id': 'c'.repeat(24) }, secrets: OLD_SECRET },
      {
        body: BODY,
        headers: { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) },
        secrets: OLD_SECRET,
      },
    ];
    for (const input of cases) {
      await expect(verifyWebhook({ ...input, now: NOW })).rejects.toThrow(
        new WebhookVerificationError('No matching signature found'),
      );
    }
  });

  it('refuses a timestamp outside the tolerance, either way, and accepts one inside it', async () => {
    const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
    await expect(
      verifyWebhook({
        body: BODY,
        headers: signed([OLD_SECRET], { at: at(-301) }),
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).rejects.toThrow('Message timestamp too old');
    await expect(
      verifyWebhook({
        body: BODY,
        headers: signed([OLD_SECRET], { at: at(301) }),
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).rejects.toThrow('Message timestamp too new');
    await expect(
      verifyWebhook({
        body: BODY,
        headers: signed([OLD_SECRET], { at: at(-299) }),
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).resolves.toBeDefined();
    await expect(
      verifyWebhook({
        body: BODY,
        headers: signed([OLD_SECRET], { at: at(-3600) }),
        secrets: OLD_SECRET,
        now: NOW,
        toleranceSeconds: 3601,
      }),
    ).resolves.toBeDefined();
  });

  it('refuses missing headers, a malformed timestamp and signatures of another version', async () => {
    const headers = signed([OLD_SECRET]);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...rest } = headers;
      await expect(
        verifyWebhook({ body: BODY, headers: rest, secrets: OLD_SECRET, now: NOW }),
      ).rejects.toThrow(WebhookVerificationError);
    }
    await expect(
      verifyWebhook({
        body: BODY,
        headers: { ...headers, 'webhook-timestamp': 'soon' },
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).rejects.toThrow('Invalid webhook-timestamp');
    const v2 = headers['webhook-signature'].replace('v1,', 'v2,');
    await expect(
      verifyWebhook({
        body: BODY,
        headers: { ...headers, 'webhook-signature': v2 },
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).rejects.toThrow('No matching signature found');
  });

  it('reads the raw body as bytes and the headers from Headers, Node objects (any case, arrays) alike', async () => {
    const headers = signed([OLD_SECRET]);
    const bytes = new TextEncoder().encode(BODY);
    await expect(
      verifyWebhook({
        body: Buffer.from(bytes),
        headers: new Headers(headers),
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).resolves.toMatchObject({ type: 'trace.flagged' });
    await expect(
      verifyWebhook({ body: bytes.buffer, headers, secrets: OLD_SECRET, now: NOW }),
    ).resolves.toMatchObject({ type: 'trace.flagged' });
    const nodeStyle = {
      'Webhook-Id': headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': [headers['webhook-timestamp']],
      'webhook-signature': headers['webhook-signature'],
    };
    await expect(
      verifyWebhook({ body: BODY, headers: nodeStyle, secrets: OLD_SECRET, now: NOW }),
    ).resolves.toBeDefined();
  });

  it('refuses a verified body that is not an event', async () => {
    const body = JSON.stringify({ hello: 'world' });
    await expect(
      verifyWebhook({ body, headers: signed([OLD_SECRET], { body }), secrets: OLD_SECRET, now: NOW }),
    ).rejects.toThrow(WebhookVerificationError);
  });

  it('refuses an empty list of secrets and a secret that is not base64 as a configuration error (TypeError)', async () => {
    const headers = signed([OLD_SECRET]);
    await expect(verifyWebhook({ body: BODY, headers, secrets: [], now: NOW })).rejects.toThrow(
      new TypeError('No secret to verify with: pass the webhook’s whsec_… secret'),
    );
    await expect(verifyWebhook({ body: BODY, headers, secrets: 'whsec_%%%', now: NOW })).rejects.toThrow(
      TypeError,
    );
  });

  it('refuses a tolerance or a time that would skip the timestamp check, as a configuration error', async () => {
    const stale = signed([OLD_SECRET], { at: new Date(NOW.getTime() - 3600_000) });
    for (const toleranceSeconds of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      await expect(
        verifyWebhook({ body: BODY, headers: stale, secrets: OLD_SECRET, now: NOW, toleranceSeconds }),
      ).rejects.toThrow(TypeError);
    }
    for (const now of [new Date('not a date'), Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(verifyWebhook({ body: BODY, headers: stale, secrets: OLD_SECRET, now })).rejects.toThrow(
        TypeError,
      );
    }
    // A tolerance of 0 is usable: the timestamp must be this very second.
    await expect(
      verifyWebhook({
        body: BODY,
        headers: signed([OLD_SECRET]),
        secrets: OLD_SECRET,
        now: NOW,
        toleranceSeconds: 0,
      }),
    ).resolves.toBeDefined();
  });

  it('checks every secret before the delivery: a malformed one is a TypeError, not a forged delivery', async () => {
    const headers = signed([OLD_SECRET]);
    for (const secrets of [
      [OLD_SECRET, 'whsec_%%%'],
      ['whsec_', OLD_SECRET],
      [OLD_SECRET, ''],
    ]) {
      const error = await verifyWebhook({ body: BODY, headers, secrets, now: NOW }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect(error).not.toBeInstanceOf(WebhookVerificationError);
    }
    // Even for a delivery that would not verify anyway (no header at all).
    await expect(
      verifyWebhook({ body: BODY, headers: {}, secrets: ['whsec_%%%'], now: NOW }),
    ).rejects.toThrow(TypeError);
  });

  it('joins the values of a header given as an array (or several keys) rather than taking the first', async () => {
    const [old, fresh] = [signed([OLD_SECRET]), signed([NEW_SECRET])];
    const both = [old['webhook-signature'], fresh['webhook-signature']];
    for (const secrets of [OLD_SECRET, NEW_SECRET]) {
      await expect(
        verifyWebhook({ body: BODY, headers: { ...old, 'webhook-signature': both }, secrets, now: NOW }),
      ).resolves.toMatchObject({ id: 'b'.repeat(24) });
      // As Node joins a repeated header, and as Headers.get does: `, `.
      await expect(
        verifyWebhook({
          body: BODY,
          headers: { ...old, 'webhook-signature': both.join(', ') },
          secrets,
          now: NOW,
        }),
      ).resolves.toBeDefined();
      await expect(
        verifyWebhook({
          body: BODY,
          headers: new Headers([
            ...Object.entries(old).filter(([k]) => k !== 'webhook-signature'),
            ...both.map((v) => ['webhook-signature', v] as [string, string]),
          ]),
          secrets,
          now: NOW,
        }),
      ).resolves.toBeDefined();
    }
    // Two different ids are not one id.
    await expect(
      verifyWebhook({
        body: BODY,
        headers: { ...old, 'webhook-id': [old['webhook-id'], 'x'] },
        secrets: OLD_SECRET,
        now: NOW,
      }),
    ).rejects.toThrow(WebhookVerificationError);
  });
});
