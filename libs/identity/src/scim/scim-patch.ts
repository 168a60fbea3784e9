import { isEmail } from 'class-validator';
import { scimError } from '#platform';
import type { ScimEmail } from './scim.schema.js';
import { normaliseEmail } from '../users/email-address.js';

/**
 * The state of a SCIM user that PUT and PATCH edit, in memory first: every operation is applied to the draft and
 * checked, and only a draft that came through whole is written (PATCH is all-or-nothing).
 */
export interface UserDraft {
  userName: string;
  /** Null: derived (given and family names, then the userName's local part). */
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  externalId: string | null;
  active: boolean;
  /** The `emails` the IdP wrote, kept as written; null: never written (the userName shows as the work address). */
  emails: ScimEmail[] | null;
}

const CORE_USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:user:';
/**
 * RFC 7643 core User attributes this service does not keep: an operation on them is accepted and ignored (identity
 * providers send them by default), unlike a path that names nothing at all.
 */
const IGNORED = new Set([
  'nickname',
  'profileurl',
  'title',
  'usertype',
  'preferredlanguage',
  'locale',
  'timezone',
  'password',
  'phonenumbers',
  'ims',
  'photos',
  'addresses',
  'entitlements',
  'roles',
  'x509certificates',
  'name.formatted',
  'name.middlename',
  'name.honorificprefix',
  'name.honorificsuffix',
  // The enterprise extension's attributes, which some IdPs send without their schema URN.
  'employeenumber',
  'costcenter',
  'organization',
  'division',
  'department',
  'manager',
]);
const NAME_MAX = 200;
const EXTERNAL_ID_MAX = 255;
/** At most this many entries in `emails`, each value at most 254 characters. */
export const EMAILS_MAX = 10;
/** `emails[type eq "work"]` or `emails[type eq "work"].value` (Entra ID's form), in lower case. */
const EMAIL_OF_TYPE = /^emails\[type eq "([a-z]{1,20})"\](\.value)?$/;

/** A SCIM boolean: true/false, or the strings "True"/"False" in any case (Entra ID sends them). */
export function scimBoolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw scimError(400, 'invalidValue', `${field} must be a boolean`);
}

/** A simple value sent bare, as `{value: x}`, or as a one-element array (the dialects differ). */
export function unwrap(value: unknown): unknown {
  let v = value;
  if (Array.isArray(v) && v.length === 1) v = v[0];
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, 'value')) {
    v = (v as Record<string, unknown>).value;
  }
  return v;
}

function optionalString(value: unknown, field: string, max: number): string | null {
  const v = unwrap(value);
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw scimError(400, 'invalidValue', `${field} must be a string`);
  const trimmed = v.trim();
  if (trimmed.length > max)
    throw scimError(400, 'invalidValue', `${field} must be at most ${max} characters`);
  return trimmed === '' ? null : trimmed;
}

/** A userName: an e-mail address (the account's), lower-cased. */
export function userNameOf(value: unknown): string {
  const v = unwrap(value);
  if (typeof v !== 'string' || v.trim() === '') throw scimError(400, 'invalidValue', 'userName is required');
  const email = normaliseEmail(v);
  if (email.length > 254 || !isEmail(email)) {
    throw scimError(400, 'invalidValue', 'userName must be an e-mail address');
  }
  return email;
}

/** The path of an operation, normalised: lower-case, the core User URN dropped; null for an extension's. */
export function normalisePath(path: string): string | null {
  const lower = path.trim().toLowerCase();
  if (lower.startsWith(CORE_USER_URN)) return lower.slice(CORE_USER_URN.length);
  if (lower.startsWith('urn:')) return null; // an extension schema: ignored
  return lower;
}

/** Whether a normalised path names an attribute this service accepts and ignores. */
function ignored(path: string): boolean {
  const head = path.split('[')[0]!;
  // Other filters on `emails` than by type (`emails[primary eq true]`…) are accepted and not applied.
  return IGNORED.has(head) || IGNORED.has(head.split('.')[0]!) || path.startsWith('emails[');
}

/** One entry of `emails`: an object with a string `value` (RFC 7643 §4.1.2), its known sub-attributes kept. */
function emailEntry(raw: unknown, field: string): ScimEmail {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw scimError(400, 'invalidValue', `${field} must be an object with a value`);
  }
  const { value, type, primary, display } = raw as Record<string, unknown>;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 254) {
    throw scimError(400, 'invalidValue', `${field}.value must be an e-mail address`);
  }
  const entry: ScimEmail = { value };
  if (typeof type === 'string' && type.length <= 20) entry.type = type;
  if (primary !== undefined && primary !== null) entry.primary = scimBoolean(primary, `${field}.primary`);
  if (typeof display === 'string' && display.length <= 254) entry.display = display;
  return entry;
}

/** A whole `emails` list (null or an empty list: none written). */
function emailList(value: unknown): ScimEmail[] | null {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > EMAILS_MAX)
    throw scimError(400, 'invalidValue', `emails has at most ${EMAILS_MAX} entries`);
  const entries = list.map((e, i) => emailEntry(e, `emails[${i}]`));
  return entries.length > 0 ? entries : null;
}

/** `emails[type eq "<type>"](.value)`: sets (or, with undefined, removes) the address of that type. */
function setEmailOfType(draft: UserDraft, type: string, value: unknown, valueOnly: boolean): void {
  const others = (draft.emails ?? []).filter((e) => e.type?.toLowerCase() !== type);
  if (value === undefined) {
    draft.emails = others.length > 0 ? others : null;
    return;
  }
  const current = (draft.emails ?? []).find((e) => e.type?.toLowerCase() === type);
  const raw = valueOnly ? { ...current, value: unwrap(value), type: current?.type ?? type } : unwrap(value);
  const entry = emailEntry(raw, `emails[type eq "${type}"]`);
  entry.type ??= type;
  // The first address written is the primary one unless the IdP says otherwise.
  if (entry.primary === undefined && !others.some((e) => e.primary)) entry.primary = true;
  if (others.length + 1 > EMAILS_MAX)
    throw scimError(400, 'invalidValue', `emails has at most ${EMAILS_MAX} entries`);
  draft.emails = [...others, entry];
}

/** The contact address of a user: the primary (else the first) work e-mail the IdP wrote, else the userName. */
export function contactEmailOf(emails: ScimEmail[] | null, userName: string): string {
  const work = (emails ?? []).filter((e) => !e.type || e.type.toLowerCase() === 'work');
  return (work.find((e) => e.primary) ?? work[0])?.value ?? userName;
}

/**
 * Sets one attribute of the draft (`value` undefined: remove; `append`: an `add` to a multi-valued attribute).
 * Throws invalidValue for an unknown path.
 */
export function setAttribute(draft: UserDraft, path: string, value: unknown, append = false): void {
  const ofType = EMAIL_OF_TYPE.exec(path);
  if (ofType) {
    setEmailOfType(draft, ofType[1]!, value, ofType[2] !== undefined);
    return;
  }
  switch (path) {
    case 'emails': {
      const written = emailList(value);
      const merged = append && written ? [...(draft.emails ?? []), ...written] : written;
      if (merged && merged.length > EMAILS_MAX) {
        throw scimError(400, 'invalidValue', `emails has at most ${EMAILS_MAX} entries`);
      }
      draft.emails = merged;
      return;
    }
    case 'username':
      if (value === undefined) throw scimError(400, 'invalidValue', 'userName cannot be removed');
      draft.userName = userNameOf(value);
      return;
    case 'displayname':
      draft.displayName = optionalString(value, 'displayName', NAME_MAX);
      return;
    case 'active':
      draft.active = value === undefined ? true : scimBoolean(unwrap(value), 'active');
      return;
    case 'externalid':
      draft.externalId = optionalString(value, 'externalId', EXTERNAL_ID_MAX);
      return;
    case 'name.givenname':
      draft.givenName = optionalString(value, 'name.givenName', NAME_MAX);
      return;
    case 'name.familyname':
      draft.familyName = optionalString(value, 'name.familyName', NAME_MAX);
      return;
    case 'name': {
      if (value === undefined || value === null) {
        draft.givenName = null;
        draft.familyName = null;
        return;
      }
      const v = Array.isArray(value) && value.length === 1 ? value[0] : value;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        throw scimError(400, 'invalidValue', 'name must be an object');
      }
      for (const [key, sub] of Object.entries(v as Record<string, unknown>)) {
        const p = `name.${key.toLowerCase()}`;
        if (p === 'name.givenname' || p === 'name.familyname') setAttribute(draft, p, sub);
      }
      return;
    }
    default:
      if (ignored(path)) return;
      throw scimError(400, 'invalidValue', `Unknown attribute path: ${path.slice(0, 100)}`);
  }
}

/** A whole-user body (POST, PUT, or a PATCH without path): its known attributes over `draft`. */
export function applyObject(draft: UserDraft, body: Record<string, unknown>, replaceAll: boolean): void {
  if (replaceAll) {
    draft.displayName = null;
    draft.givenName = null;
    draft.familyName = null;
    draft.externalId = null;
    draft.active = true;
    draft.emails = null;
  }
  for (const [key, value] of Object.entries(body)) {
    const path = normalisePath(key);
    if (path === null) continue;
    // A PATCH value may address sub-attributes with dotted keys (`"name.givenName": "Ann"`).
    if (
      [
        'username',
        'displayname',
        'active',
        'externalid',
        'name',
        'name.givenname',
        'name.familyname',
        'emails',
      ].includes(path)
    ) {
      setAttribute(draft, path, value === null ? undefined : value);
    }
    // Anything else (schemas, id, meta, groups, unknown attributes) is ignored, as RFC 7643 allows.
  }
}

/** The display name a draft shows: its own, else the given and family names, else the userName's local part. */
export function displayNameOf(draft: UserDraft): string {
  return (
    draft.displayName ??
    ([draft.givenName, draft.familyName].filter(Boolean).join(' ') || draft.userName.split('@')[0]!)
  ).slice(0, NAME_MAX);
}

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string | null;
  value: unknown;
}

/** The operations of a PatchOp body, checked: schemas, op names in any case, at most 100 operations. */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw scimError(400, 'invalidSyntax', 'The body must be a PatchOp message');
  }
  const { Operations: operations } = body as Record<string, unknown>;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw scimError(400, 'invalidValue', 'Operations must be a non-empty array');
  }
  if (operations.length > 100) throw scimError(400, 'invalidValue', 'At most 100 operations per request');
  return operations.map((raw, i) => {
    if (!raw || typeof raw !== 'object')
      throw scimError(400, 'invalidValue', `Operations[${i}] must be an object`);
    const { op, path, value } = raw as Record<string, unknown>;
    const name = typeof op === 'string' ? op.toLowerCase() : '';
    if (name !== 'add' && name !== 'replace' && name !== 'remove') {
      throw scimError(400, 'invalidValue', `Operations[${i}].op must be add, replace or remove`);
    }
    if (path !== undefined && path !== null && (typeof path !== 'string' || path.length > 500)) {
      throw scimError(400, 'invalidValue', `Operations[${i}].path must be a string`);
    }
    const p = typeof path === 'string' && path.trim() !== '' ? path : null;
    if (name === 'remove' && p === null) {
      throw scimError(400, 'noTarget', `Operations[${i}]: remove needs a path`);
    }
    if (name !== 'remove' && value === undefined) {
      throw scimError(400, 'invalidValue', `Operations[${i}]: ${name} needs a value`);
    }
    return { op: name, path: p, value };
  });
}

/** Applies PATCH operations to a user draft (in memory; the caller writes the result). */
export function patchUser(draft: UserDraft, operations: PatchOperation[]): void {
  for (const operation of operations) {
    if (operation.path === null) {
      const v =
        Array.isArray(operation.value) && operation.value.length === 1 ? operation.value[0] : operation.value;
      if (!v || typeof v !== 'object' || Array.isArray(v)) {
        throw scimError(400, 'invalidValue', 'An operation without path takes an object value');
      }
      applyObject(draft, v as Record<string, unknown>, false);
      continue;
    }
    const path = normalisePath(operation.path);
    if (path === null) continue;
    setAttribute(
      draft,
      path,
      operation.op === 'remove' ? undefined : operation.value,
      operation.op === 'add',
    );
  }
}
