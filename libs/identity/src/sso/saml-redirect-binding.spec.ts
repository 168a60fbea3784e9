import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  inflateRedirectMessage,
  REDIRECT_MESSAGE_MAX_CHARS,
  redirectParams,
  signedRedirectOctets,
} from './saml-redirect-binding.js';

describe('the HTTP-Redirect binding', () => {
  it('reads the binding’s parameters raw and decoded, and ignores the others', () => {
    const params = redirectParams(
      'SAMLResponse=a%2Bb%3D&RelayState=x+y%26z&SigAlg=s%23a&Signature=c%2F&other=1',
    );
    expect(params.get('SAMLResponse')).toEqual({ name: 'SAMLResponse', raw: 'a%2Bb%3D', value: 'a+b=' });
    expect(params.get('RelayState')).toEqual({ name: 'RelayState', raw: 'x+y%26z', value: 'x y&z' });
    expect(params.get('Signature')!.value).toBe('c/');
    expect(params.has('other')).toBe(false);
    expect(redirectParams('').size).toBe(0);
    expect(redirectParams('SAMLResponse').get('SAMLResponse')!.value).toBe('');
  });

  it('refuses a parameter given twice and bad percent-encoding', () => {
    expect(() => redirectParams('Signature=a&Signature=b')).toThrow('Signature is given more than once');
    expect(() => redirectParams('SAMLResponse=%E0%A4%A')).toThrow('SAMLResponse is not URL-encoded');
  });

  it('signs the message, then RelayState when present, then SigAlg, as sent', () => {
    const p = redirectParams('Signature=z&SigAlg=s%23a&RelayState=r%20s&SAMLResponse=m%2B');
    expect(signedRedirectOctets(p.get('SAMLResponse')!, p.get('RelayState'), p.get('SigAlg')!)).toBe(
      'SAMLResponse=m%2B&RelayState=r%20s&SigAlg=s%23a',
    );
    expect(signedRedirectOctets(p.get('SAMLResponse')!, undefined, p.get('SigAlg')!)).toBe(
      'SAMLResponse=m%2B&SigAlg=s%23a',
    );
  });

  it('inflates a message within its bound, and refuses the rest', () => {
    const encoded = deflateRawSync(Buffer.from('<samlp:LogoutResponse/>')).toString('base64');
    expect(inflateRedirectMessage(encoded, 1024)).toBe('<samlp:LogoutResponse/>');
    const bomb = deflateRawSync(Buffer.alloc(100_000, 0x20)).toString('base64');
    expect(bomb.length).toBeLessThan(1024);
    expect(() => inflateRedirectMessage(bomb, 64 * 1024)).toThrow('The message is too large');
    expect(() => inflateRedirectMessage(Buffer.from('<xml/>').toString('base64'), 1024)).toThrow(
      'The message is not deflated',
    );
    expect(() => inflateRedirectMessage('not base64!', 1024)).toThrow('The message is not base64');
    expect(() => inflateRedirectMessage('A'.repeat(REDIRECT_MESSAGE_MAX_CHARS + 1), 1024)).toThrow(
      'The message is not base64',
    );
    expect(() => inflateRedirectMessage(deflateRawSync(Buffer.alloc(0)).toString('base64'), 1024)).toThrow(
      'The message is empty',
    );
  });
});
