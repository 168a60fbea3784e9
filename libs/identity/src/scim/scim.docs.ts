import type { ApiQueryOptions, ApiResponseOptions } from '@nestjs/swagger';
import { SCHEMA } from './scim-discovery.js';

/** The OpenAPI text of the SCIM 2.0 routes (scim.controller.ts), kept out of the controller. */

const SCIM_JSON = 'application/scim+json';
const RESOURCE = { type: 'object' as const, additionalProperties: true };
const ERROR = {
  type: 'object' as const,
  required: ['schemas', 'status'],
  properties: {
    schemas: { type: 'array' as const, items: { type: 'string' as const } },
    status: { type: 'string' as const },
    scimType: { type: 'string' as const },
    detail: { type: 'string' as const },
  },
};
const scimContent = (schema: object) => ({ [SCIM_JSON]: { schema }, 'application/json': { schema } });

/** A resource (or a list of them) as SCIM JSON. */
const answer = (status: number, description: string): ApiResponseOptions => ({
  status,
  description,
  content: scimContent(RESOURCE),
});
/** RFC 7644 error bodies, not the API's error envelope. */
const errors = (...statuses: [number, string][]): ApiResponseOptions[] =>
  statuses.map(([status, description]) => ({ status, description, content: scimContent(ERROR) }));
/** What every route behind the SCIM token may answer. */
const AUTH_ERRORS: [number, string][] = [
  [401, 'No or an invalid SCIM token'],
  [403, 'The plan does not include scim'],
  [
    429,
    '600 requests per 15 minutes per token and per IP; see Retry-After. Every answer carries RateLimit-Limit, ' +
      'RateLimit-Remaining and RateLimit-Reset of the tighter window',
  ],
];

export const SCIM_PRODUCES = [SCIM_JSON];
/** A resource in the body, as SCIM JSON or plain JSON. */
export const SCIM_BODY = { consumes: [SCIM_JSON, 'application/json'], body: { schema: RESOURCE } };

export const RESOURCE_TYPE_ID = { name: 'id', description: '`User` or `Group`' };
export const SCHEMA_ID = { name: 'id', description: `\`${SCHEMA.user}\` or \`${SCHEMA.group}\`` };
export const GROUP_ID = { name: 'id', description: '`owner`, `admin`, `member` or `reviewer`' };
export const FIXED_GROUP_ID = { name: 'id', description: 'A role bucket' };

const ATTRIBUTES: ApiQueryOptions = { name: 'attributes', required: false, type: String };
const EXCLUDED_ATTRIBUTES: ApiQueryOptions = { name: 'excludedAttributes', required: false, type: String };
/** Listed as stacked decorators would be: the document shows excludedAttributes, then attributes. */
export const ATTRIBUTE_QUERY = [ATTRIBUTES, EXCLUDED_ATTRIBUTES];
/** Listed as stacked decorators would be: the document shows them the other way round, filter first. */
export const LIST_QUERY: ApiQueryOptions[] = [
  EXCLUDED_ATTRIBUTES,
  ATTRIBUTES,
  { name: 'count', required: false, type: String, description: 'Default 100, at most 200.' },
  { name: 'startIndex', required: false, type: String, description: '1-based, default 1.' },
  {
    name: 'filter',
    required: false,
    type: String,
    description: 'RFC 7644 filter (e.g. `userName eq "a@b.c"`).',
  },
];

export const SCIM_DOCS = {
  listUsers:
    'Members of the token’s organization, oldest first. `filter`: every RFC 7644 operator (`eq ne co sw ew pr gt ' +
    'ge lt le`), `and`, `or`, `not`, parentheses, on userName, displayName, active, externalId, emails.value, ' +
    'name.givenName, name.familyName, meta.created, meta.lastModified (userName and names case-insensitive). ' +
    'Unparseable: 400 invalidFilter.',
  createUser:
    'Creates the account and its membership atomically. userName is the e-mail address (lower-cased); ' +
    'displayName falls back to the given and family names, then the address’s local part. The role comes from ' +
    'the body’s `groups[].display|value` and `roles[].value` against the organization’s role-mapping rules ' +
    '(default member). An address that already has an account: 409 uniqueness. Writes `scim.user.created`.',
  replaceUser:
    'A full replace: attributes left out are cleared (name, externalId, displayName, which then falls back) or ' +
    'reset (active: true). Writes `scim.user.updated`, and `scim.user.deactivated|reactivated` when active changes.',
  patchUser:
    '`Operations` of `add`, `replace`, `remove` (any case), on a path (userName, displayName, active, externalId, ' +
    'name.givenName, name.familyName, name, `emails[type eq "work"].value`), or without path with a partial user. ' +
    'All or nothing: one bad operation leaves the user unchanged. Booleans may be the strings "True"/"False"; a ' +
    'value may come as an object or a one-element array. Extension attributes and RFC 7643 attributes the service ' +
    'does not keep are ignored; a path naming nothing is 400 invalidValue.',
  deleteUser:
    'The membership becomes inactive, as `active: false` (sign-in refused, open sessions get ' +
    'ACCOUNT_DEACTIVATED); the account is kept. Writes `scim.user.deactivated`.',
  listGroups:
    'The four fixed groups `owner`, `admin`, `member`, `reviewer` (the viewer role), with their members (at most ' +
    '1,000 each; `excludedAttributes=members` leaves them out). `filter` on displayName, id or members.value.',
  patchGroup:
    '`add` members (they get the bucket’s role), `remove` them (they become `member`) by value list or by the ' +
    'path `members[value eq "<id>"]`, or `replace` the list (Okta). All or nothing; the organization keeps an ' +
    'active owner (400). Renaming a bucket: 400 mutability. Writes `scim.group.updated`.',
} as const;

/** Every answer of each route, success and RFC 7644 errors. */
export const SCIM_RESPONSES = {
  serviceProviderConfig: [answer(200, 'ServiceProviderConfig')],
  resourceTypes: [answer(200, 'ListResponse')],
  resourceType: [answer(200, 'ResourceType'), ...errors([404, 'No such resource type'])],
  schemas: [answer(200, 'ListResponse')],
  schema: [answer(200, 'Schema'), ...errors([404, 'No such schema'])],
  listUsers: [
    answer(200, 'ListResponse of Users'),
    ...errors([400, 'invalidFilter, invalidValue'], ...AUTH_ERRORS),
  ],
  getUser: [answer(200, 'User'), ...errors([404, 'Not a member of the organization'], ...AUTH_ERRORS)],
  createUser: [
    answer(201, 'The User; Location header'),
    ...errors([400, 'invalidValue, invalidSyntax'], [409, 'uniqueness'], ...AUTH_ERRORS),
  ],
  replaceUser: [
    answer(200, 'The User'),
    ...errors([400, 'invalidValue'], [404, 'Not a member'], [409, 'uniqueness'], ...AUTH_ERRORS),
  ],
  patchUser: [
    answer(200, 'The User'),
    ...errors(
      [400, 'invalidValue, noTarget, invalidSyntax'],
      [404, 'Not a member'],
      [409, 'uniqueness'],
      ...AUTH_ERRORS,
    ),
  ],
  deleteUser: [
    { status: 204, description: 'Deactivated' },
    ...errors([400, 'The last active owner'], [404, 'Not a member'], ...AUTH_ERRORS),
  ],
  listGroups: [answer(200, 'ListResponse of Groups'), ...errors([400, 'invalidFilter'], ...AUTH_ERRORS)],
  getGroup: [answer(200, 'Group'), ...errors([404, 'No such group'], ...AUTH_ERRORS)],
  patchGroup: [
    { status: 204, description: 'Changed' },
    ...errors([400, 'invalidValue, mutability, invalidFilter'], [404, 'No such group'], ...AUTH_ERRORS),
  ],
  /** POST, PUT and DELETE of a group: the buckets are fixed. */
  fixedGroups: errors([405, 'The role buckets are fixed'], ...AUTH_ERRORS),
};
