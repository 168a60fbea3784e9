import type { Profile } from '@node-saml/node-saml';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { isEmail } from 'class-validator';
import { normaliseEmail } from '../users/email-address.js';
import { GROUPS_MAX } from './role-mapping.js';

/**
 * Reading SAML messages: their envelope before the signature is checked, and the verified assertion's subject,
 * e-mail, name and groups. Pure functions (no Nest, no database); a message they refuse throws SamlMessageError,
 * which the ACS answers as a failed sign-in and the logout callback as a refusal.
 */

/** Largest SAML message read (the form itself is bounded at 5 MB). */
export const MESSAGE_MAX_CHARS = 5 * 1024 * 1024;
/**
 * Largest logout message, decoded, and its elements at most: real ones are a few kilobytes, and node-saml checks a
 * LogoutRequest's signature with an XPath search whose cost grows with the square of the document.
 */
export const LOGOUT_MAX_BYTES = 64 * 1024;
const LOGOUT_MAX_ELEMENTS = 200;
/** An XML ID as this service and the IdPs write them (InResponseTo names one of ours). */
export const XML_ID = /^[A-Za-z_][\w.-]{0,127}$/;
export const NAME_ID_MAX = 512;
export const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
/** Where an IdP may put the e-mail when the NameID is not one: `email`, then the usual claim and OID names. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
];
const NAME_ATTRIBUTES = ['name', 'displayName', 'http://schemas.microsoft.com/identity/claims/displayname'];
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

/** Why a SAML message was refused while it was read. */
export class SamlMessageError extends Error {}

/** The root of a SAML message, read before its signature is checked, only to find whose it is. */
export interface Envelope {
  root: string;
  inResponseTo: string | null;
  destination: string | null;
  nameId: string | null;
  id: string | null;
  issueInstant: string | null;
  /** The parsed root element (for reading the root's direct children once the message is verified). */
  element: Element;
}

/** An xml2js node, as node-saml hands the verified assertion over. */
export type XmlNode = Record<string, unknown> & { $?: Record<string, string>; _?: string };

/** The first direct child element `localName` of `parent`, or undefined. */
function childElement(parent: Element, localName: string): Element | undefined {
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).localName === localName) return node as Element;
  }
  return undefined;
}
const hasControlCharacter = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
};
/** The trimmed text of the first direct child element `localName` of `parent`, or undefined. */
const childText = (parent: Element, localName: string): string | undefined =>
  childElement(parent, localName)?.textContent?.trim();

/** The first child element `name` of an xml2js node, and the text or attributes of nodes. */
const child = (node: unknown, name: string): XmlNode | undefined => {
  const list = (node as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(list) ? (list[0] as XmlNode) : undefined;
};
const children = (node: unknown, name: string): XmlNode[] => {
  const list = (node as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(list) ? (list as XmlNode[]) : [];
};

/** An attribute's values as strings (a single value or a list), bounded. */
export function attributeValues(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((v): v is string => typeof v === 'string').slice(0, GROUPS_MAX);
}

/** An attribute of the assertion, only if the assertion has it (not from the object's prototype). */
export function attribute(profile: Profile, name: string): unknown {
  const attributes = profile.attributes as Record<string, unknown> | undefined;
  return attributes && Object.hasOwn(attributes, name) ? attributes[name] : undefined;
}

/**
 * The message's root element, its InResponseTo, Destination and NameID, read without trusting them: they only
 * choose the organization whose keys then verify the message. A DOCTYPE is refused (no entity tricks).
 */
export function decodeEnvelope(encoded: string, maxBytes = MESSAGE_MAX_CHARS): Envelope {
  if (encoded.length > MESSAGE_MAX_CHARS || !/^[A-Za-z0-9+/=\r\n]+$/.test(encoded)) {
    throw new SamlMessageError('the message is not base64');
  }
  return envelopeOf(Buffer.from(encoded, 'base64').toString('utf8'), maxBytes);
}

/** The envelope of a message's XML (HTTP-POST: decoded from base64; HTTP-Redirect: inflated). */
export function envelopeOf(xml: string, maxBytes: number): Envelope {
  if (xml.length > maxBytes) throw new SamlMessageError('the message is too large');
  if (maxBytes < MESSAGE_MAX_CHARS && (xml.match(/</g)?.length ?? 0) > LOGOUT_MAX_ELEMENTS) {
    throw new SamlMessageError('the message has too many elements');
  }
  const doc = parse(xml);
  const root = doc.documentElement;
  if (!root) throw new SamlMessageError('empty message');
  const inResponseTo = root.getAttribute('InResponseTo') || null;
  if (inResponseTo !== null && !XML_ID.test(inResponseTo))
    throw new SamlMessageError('malformed InResponseTo');
  // Only the root's own children count: a NameID inside a signature's KeyInfo (unsigned) is not the subject.
  const nameId = root.localName === 'LogoutRequest' ? childText(root, 'NameID') : undefined;
  if (nameId !== undefined && (nameId.length > NAME_ID_MAX || hasControlCharacter(nameId))) {
    throw new SamlMessageError('malformed NameID');
  }
  return {
    root: root.localName ?? '',
    inResponseTo,
    destination: root.getAttribute('Destination') || null,
    nameId: nameId || null,
    id: root.getAttribute('ID') || null,
    issueInstant: root.getAttribute('IssueInstant') || null,
    element: root,
  };
}

function parse(xml: string) {
  if (/<!DOCTYPE/i.test(xml)) throw new SamlMessageError('a DOCTYPE in a SAML message');
  try {
    return new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (err) {
    throw new SamlMessageError(`malformed XML: ${(err as Error).message.slice(0, 100)}`);
  }
}

/**
 * Whether a LogoutResponse reports success. Read only once the message is verified (node-saml requires a
 * LogoutResponse to be signed as a whole), from the root's own children, not from the signature's unsigned KeyInfo.
 */
export function logoutSucceeded(envelope: Envelope): boolean {
  const status = childElement(envelope.element, 'Status');
  return (status ? childElement(status, 'StatusCode')?.getAttribute('Value') : undefined) === STATUS_SUCCESS;
}

/** The Issuer of a verified message: the root's own child. */
export function issuerOf(envelope: Envelope): string | undefined {
  return childText(envelope.element, 'Issuer');
}

/** The verified assertion's ID, or undefined when it has none (or one longer than an assertion id may be). */
export function assertionOf(profile: Profile): { assertion: XmlNode; id: string } | undefined {
  // The verified assertion, as xml2js read it (the root element is not wrapped in a list).
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlNode } | undefined)?.Assertion;
  const id = assertion?.$?.ID;
  if (!assertion || !id || id.length > 256) return undefined;
  return { assertion, id };
}

/** The signed assertion must have one bearer confirmation that is for this ACS and answers this request. */
export function checkSubjectConfirmation(assertion: XmlNode, inResponseTo: string, acsUrl: string): void {
  const bearer = children(child(assertion, 'Subject'), 'SubjectConfirmation').filter(
    (c) => c.$?.Method === BEARER,
  );
  const data = bearer.map((c) => child(c, 'SubjectConfirmationData')?.$).filter((d) => d !== undefined);
  if (data.length === 0) throw new SamlMessageError('assertion without a bearer SubjectConfirmationData');
  if (!data.some((d) => d.Recipient === acsUrl && d.InResponseTo === inResponseTo)) {
    throw new SamlMessageError('no bearer confirmation for this ACS and this request');
  }
}

/** The NameID when it is an e-mail address (its format says so, or it reads as one), else the `email` attribute. */
export function emailOf(profile: Profile): string {
  const fromNameId = profile.nameIDFormat === EMAIL_FORMAT || isEmail(profile.nameID) ? profile.nameID : '';
  const fromAttribute = EMAIL_ATTRIBUTES.map((a) => attributeValues(attribute(profile, a))[0]).find(
    (v) => v !== undefined,
  );
  const email = normaliseEmail(isEmail(fromNameId) ? fromNameId : (fromAttribute ?? ''));
  if (!isEmail(email) || email.length > 254) throw new SamlMessageError('no usable email in the assertion');
  return email;
}

/** The user's name: the first non-blank name attribute, else the e-mail's local part; trimmed, bounded. */
export function displayNameOf(profile: Profile, email: string): string {
  const name =
    NAME_ATTRIBUTES.map((a) => attribute(profile, a)).find(
      (v): v is string => typeof v === 'string' && v.trim() !== '',
    ) ?? email.split('@')[0]!;
  return name.trim().slice(0, 200);
}
