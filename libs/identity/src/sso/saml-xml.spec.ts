import type { Profile } from '@node-saml/node-saml';
import { describe, expect, it } from 'vitest';
import { GROUPS_MAX } from './role-mapping.js';
import {
  assertionOf,
  attribute,
  attributeValues,
  checkSubjectConfirmation,
  decodeEnvelope,
  displayNameOf,
  EMAIL_FORMAT,
  emailOf,
  envelopeOf,
  issuerOf,
  LOGOUT_MAX_BYTES,
  logoutSucceeded,
  MESSAGE_MAX_CHARS,
  SamlMessageError,
  type XmlNode,
} from './saml-xml.js';

const P = 'urn:oasis:names:tc:SAML:2.0:protocol';
const A = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const base64 = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');
const profile = (fields: Record<string, unknown>) => fields as unknown as Profile;
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('not refused');
};

describe('decodeEnvelope and envelopeOf', () => {
  it('reads the root, InResponseTo, Destination, ID and IssueInstant of a message', () => {
    const envelope = decodeEnvelope(
      base64(
        `<samlp:Response xmlns:samlp="${P}" ID="_r1" InResponseTo="_req-1.a" Destination="https://sp/acs" ` +
          `IssueInstant="2025-01-01T00:00:00Z"><saml:Issuer xmlns:saml="${A}">idp</saml:Issuer></samlp:Response>`,
      ),
    );
    expect(envelope).toMatchObject({
      root: 'Response',
      inResponseTo: '_req-1.a',
      destination: 'https://sp/acs',
      id: '_r1',
      issueInstant: '2025-01-01T00:00:00Z',
      nameId: null,
    });
  });

  it('gives null for the attributes a message lacks', () => {
    expect(envelopeOf(`<Response/>`, LOGOUT_MAX_BYTES)).toMatchObject({
      root: 'Response',
      inResponseTo: null,
      destination: null,
      id: null,
      issueInstant: null,
    });
  });

  it('refuses what is not base64, a DOCTYPE, malformed XML and a malformed InResponseTo', () => {
    const err = refusal(() => decodeEnvelope('<Response/>'));
    expect(err).toBeInstanceOf(SamlMessageError);
    expect((err as Error).message).toBe('the message is not base64');
    expect(() => decodeEnvelope(base64('<!DOCTYPE x [<!ENTITY e "x">]><Response/>'))).toThrow(
      'a DOCTYPE in a SAML message',
    );
    expect(() => decodeEnvelope(base64('<Response><Open></Response>'))).toThrow(/^malformed XML: /);
    expect(() => decodeEnvelope(base64('<Response InResponseTo="1bad id"/>'))).toThrow(
      'malformed InResponseTo',
    );
  });

  it('refuses a message over its size, and a logout message of too many elements', () => {
    expect(() => decodeEnvelope('A'.repeat(MESSAGE_MAX_CHARS + 4))).toThrow('the message is not base64');
    expect(() => envelopeOf(`<Response>${' '.repeat(100)}</Response>`, 50)).toThrow(
      'the message is too large',
    );
    const many = `<LogoutRequest>${'<a/>'.repeat(200)}</LogoutRequest>`;
    expect(() => envelopeOf(many, LOGOUT_MAX_BYTES)).toThrow('the message has too many elements');
    // The element bound is the logout one: a sign-in response may have many more.
    expect(envelopeOf(many.replaceAll('LogoutRequest', 'Response'), MESSAGE_MAX_CHARS).root).toBe('Response');
  });

  it('reads a LogoutRequest’s NameID from the root’s own children only', () => {
    const signed = (nameId: string) =>
      `<samlp:LogoutRequest xmlns:samlp="${P}" xmlns:saml="${A}" ID="_l1">` +
      `<ds:Signature xmlns:ds="${DS}"><ds:KeyInfo><saml:NameID>intruder@example.com</saml:NameID></ds:KeyInfo>` +
      `</ds:Signature>${nameId}</samlp:LogoutRequest>`;
    expect(envelopeOf(signed('<saml:NameID> user@example.com </saml:NameID>'), LOGOUT_MAX_BYTES).nameId).toBe(
      'user@example.com',
    );
    expect(envelopeOf(signed(''), LOGOUT_MAX_BYTES).nameId).toBeNull();
  });

  it('refuses a NameID with a control character or over 512 characters', () => {
    const request = (nameId: string) =>
      `<samlp:LogoutRequest xmlns:samlp="${P}" xmlns:saml="${A}"><saml:NameID>${nameId}</saml:NameID>` +
      `</samlp:LogoutRequest>`;
    expect(() => envelopeOf(request('a&#x1;b'), LOGOUT_MAX_BYTES)).toThrow('malformed NameID');
    expect(() => envelopeOf(request('a'.repeat(513)), LOGOUT_MAX_BYTES)).toThrow('malformed NameID');
    expect(envelopeOf(request('a'.repeat(512)), LOGOUT_MAX_BYTES).nameId).toHaveLength(512);
  });
});

describe('a verified LogoutResponse', () => {
  const response = (inner: string) =>
    envelopeOf(
      `<samlp:LogoutResponse xmlns:samlp="${P}" xmlns:saml="${A}">${inner}</samlp:LogoutResponse>`,
      LOGOUT_MAX_BYTES,
    );

  it('succeeded only when its own Status says Success', () => {
    const status = (value: string) => `<samlp:Status><samlp:StatusCode Value="${value}"/></samlp:Status>`;
    expect(logoutSucceeded(response(status(SUCCESS)))).toBe(true);
    expect(logoutSucceeded(response(status('urn:oasis:names:tc:SAML:2.0:status:Requester')))).toBe(false);
    expect(logoutSucceeded(response(''))).toBe(false);
    // A Status inside another element (a signature's KeyInfo) is not the response's.
    expect(logoutSucceeded(response(`<ds:KeyInfo xmlns:ds="${DS}">${status(SUCCESS)}</ds:KeyInfo>`))).toBe(
      false,
    );
  });

  it('has the Issuer of its own children, trimmed', () => {
    expect(issuerOf(response('<saml:Issuer> https://idp </saml:Issuer>'))).toBe('https://idp');
    expect(issuerOf(response(`<ds:KeyInfo xmlns:ds="${DS}"><saml:Issuer>x</saml:Issuer></ds:KeyInfo>`))).toBe(
      undefined,
    );
  });
});

describe('the verified assertion', () => {
  const confirmation = (method: string, data?: Record<string, string>): XmlNode => ({
    $: { Method: method },
    ...(data ? { SubjectConfirmationData: [{ $: data }] } : {}),
  });
  const assertion = (...confirmations: XmlNode[]): XmlNode => ({
    $: { ID: '_a1' },
    Subject: [{ SubjectConfirmation: confirmations }],
  });
  const bearer = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

  it('has an ID of at most 256 characters', () => {
    const withId = (id?: string) =>
      profile({ getAssertion: () => ({ Assertion: { $: id === undefined ? {} : { ID: id } } }) });
    expect(assertionOf(withId('_a1'))?.id).toBe('_a1');
    expect(assertionOf(withId(''))).toBeUndefined();
    expect(assertionOf(withId(undefined))).toBeUndefined();
    expect(assertionOf(withId('a'.repeat(257)))).toBeUndefined();
    expect(assertionOf(profile({}))).toBeUndefined();
  });

  it('must have a bearer confirmation for this ACS that answers this request', () => {
    const ok = { Recipient: 'https://sp/acs', InResponseTo: '_req' };
    expect(() =>
      checkSubjectConfirmation(assertion(confirmation(bearer, ok)), '_req', 'https://sp/acs'),
    ).not.toThrow();
    expect(() =>
      checkSubjectConfirmation(
        assertion(confirmation(bearer, { ...ok, Recipient: 'https://elsewhere' }), confirmation(bearer, ok)),
        '_req',
        'https://sp/acs',
      ),
    ).not.toThrow();
    expect(() =>
      checkSubjectConfirmation(assertion(confirmation(bearer, ok)), '_other', 'https://sp/acs'),
    ).toThrow('no bearer confirmation for this ACS and this request');
    expect(() =>
      checkSubjectConfirmation(assertion(confirmation(bearer, ok)), '_req', 'https://other/acs'),
    ).toThrow('no bearer confirmation for this ACS and this request');
  });

  it('refuses an assertion whose only confirmations are not bearer ones or carry no data', () => {
    const ok = { Recipient: 'https://sp/acs', InResponseTo: '_req' };
    const holderOfKey = 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key';
    for (const a of [assertion(confirmation(holderOfKey, ok)), assertion(confirmation(bearer)), { $: {} }]) {
      const err = refusal(() => checkSubjectConfirmation(a, '_req', 'https://sp/acs'));
      expect(err).toBeInstanceOf(SamlMessageError);
      expect((err as Error).message).toBe('assertion without a bearer SubjectConfirmationData');
    }
  });
});

describe('the user an assertion names', () => {
  it('takes the e-mail from the NameID when it is one, normalised', () => {
    expect(emailOf(profile({ nameID: 'Ada@Example.COM', nameIDFormat: EMAIL_FORMAT }))).toBe(
      'ada@example.com',
    );
    expect(emailOf(profile({ nameID: 'ada@example.com', attributes: { email: 'other@example.com' } }))).toBe(
      'ada@example.com',
    );
  });

  it('else from the first e-mail attribute that has a value', () => {
    const opaque = { nameID: 'a1b2c3', nameIDFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' };
    expect(
      emailOf(profile({ ...opaque, attributes: { mail: ['Grace@Example.com', 'x@example.com'] } })),
    ).toBe('grace@example.com');
    expect(
      emailOf(
        profile({
          ...opaque,
          attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': 'oid@example.com', mail: 'mail@example.com' },
        }),
      ),
    ).toBe('mail@example.com');
    // A NameID in e-mail format that is not an address falls back to the attributes too.
    expect(
      emailOf(
        profile({ nameID: 'not-an-address', nameIDFormat: EMAIL_FORMAT, attributes: { email: 'e@x.io' } }),
      ),
    ).toBe('e@x.io');
  });

  it('refuses an assertion without a usable e-mail', () => {
    const err = refusal(() => emailOf(profile({ nameID: 'a1b2c3', attributes: { email: 'nobody' } })));
    expect(err).toBeInstanceOf(SamlMessageError);
    expect((err as Error).message).toBe('no usable email in the assertion');
    expect(() => emailOf(profile({ nameID: 'a1b2c3' }))).toThrow('no usable email in the assertion');
    expect(() =>
      emailOf(
        profile({ nameID: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.io` }),
      ),
    ).toThrow('no usable email in the assertion');
  });

  it('reads only the assertion’s own attributes, not the object’s prototype', () => {
    expect(attribute(profile({ attributes: {} }), 'constructor')).toBeUndefined();
    expect(attribute(profile({}), 'email')).toBeUndefined();
    expect(attribute(profile({ attributes: { groups: ['a'] } }), 'groups')).toEqual(['a']);
  });

  it('has a name from the first non-blank name attribute, else the e-mail’s local part, trimmed and bounded', () => {
    expect(displayNameOf(profile({ attributes: { name: '  ', displayName: ' Ada L ' } }), 'a@x.io')).toBe(
      'Ada L',
    );
    expect(displayNameOf(profile({ attributes: { name: ['list'] } }), 'ada@x.io')).toBe('ada');
    expect(displayNameOf(profile({ attributes: { name: 'n'.repeat(300) } }), 'a@x.io')).toHaveLength(200);
  });

  it('has its attribute values as strings, bounded', () => {
    expect(attributeValues('one')).toEqual(['one']);
    expect(attributeValues(undefined)).toEqual([]);
    expect(attributeValues(['a', 1, null, 'b', { x: 1 }])).toEqual(['a', 'b']);
    expect(attributeValues(Array.from({ length: GROUPS_MAX + 5 }, (_, i) => `g${i}`))).toHaveLength(
      GROUPS_MAX,
    );
  });
});
