/**
 * The SCIM discovery documents (RFC 7643 §5–7, RFC 7644 §4): what this service provider supports, its two resource
 * types and their schemas, with the RFC's attribute definitions for the attributes it keeps.
 */
export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** Largest page (`count` is clamped to it) and the default. */
export const SCIM_MAX_RESULTS = 200;
export const SCIM_DEFAULT_COUNT = 100;

interface AttributeOptions {
  type?: 'string' | 'boolean' | 'complex' | 'reference' | 'dateTime';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  subAttributes?: Record<string, unknown>[];
  referenceTypes?: string[];
  canonicalValues?: string[];
}

/** One attribute definition with the RFC's defaults written out (clients read them literally). */
function attribute(name: string, description: string, o: AttributeOptions = {}): Record<string, unknown> {
  return {
    name,
    type: o.type ?? 'string',
    multiValued: o.multiValued ?? false,
    description,
    required: o.required ?? false,
    ...(o.type === 'complex' ? {} : { caseExact: o.caseExact ?? false }),
    mutability: o.mutability ?? 'readWrite',
    returned: o.returned ?? 'default',
    ...(o.type === 'complex' || o.type === 'boolean' ? {} : { uniqueness: o.uniqueness ?? 'none' }),
    ...(o.subAttributes ? { subAttributes: o.subAttributes } : {}),
    ...(o.referenceTypes ? { referenceTypes: o.referenceTypes } : {}),
    ...(o.canonicalValues ? { canonicalValues: o.canonicalValues } : {}),
  };
}

const USER_ATTRIBUTES = [
  attribute('userName', 'The e-mail address the user signs in with; unique, compared case-insensitively.', {
    required: true,
    uniqueness: 'server',
  }),
  attribute('name', 'The components of the user’s name.', {
    type: 'complex',
    subAttributes: [
      attribute('givenName', 'The given name.'),
      attribute('familyName', 'The family name.'),
      attribute('formatted', 'The full name, as shown.', { mutability: 'readOnly' }),
    ],
  }),
  attribute(
    'displayName',
    'The name this organization shows, kept per organization; defaults to the given and family names, then the ' +
      'account’s name.',
  ),
  attribute(
    'active',
    'false deprovisions the user in this organization: sign-in refused, open sessions read only until they ' +
      'expire, open streams closed, the user’s workspace keys stopped.',
    {
      type: 'boolean',
    },
  ),
  attribute(
    'emails',
    'E-mail addresses, kept and returned as written; the primary (else the first) work address is the contact ' +
      'address. The sign-in address is the userName.',
    {
      type: 'complex',
      multiValued: true,
      subAttributes: [
        attribute('value', 'The address.'),
        attribute('type', 'A label: work, home or other.', { canonicalValues: ['work', 'home', 'other'] }),
        attribute('primary', 'The preferred address.', { type: 'boolean' }),
        attribute('display', 'A label for display.'),
      ],
    },
  ),
  attribute('groups', 'The role bucket the user is in (read-only; change it through the Group).', {
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    subAttributes: [
      attribute('value', 'The group id.', { mutability: 'readOnly' }),
      attribute('$ref', 'The group’s URI.', {
        type: 'reference',
        referenceTypes: ['Group'],
        mutability: 'readOnly',
      }),
      attribute('display', 'The group name.', { mutability: 'readOnly' }),
    ],
  }),
];

const GROUP_ATTRIBUTES = [
  attribute('displayName', 'The role bucket: owner, admin, member or reviewer (the viewer role).', {
    required: true,
    mutability: 'readOnly',
    uniqueness: 'server',
  }),
  attribute('members', 'The users in the bucket; adding one gives the user that role.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attribute('value', 'The user id.', { mutability: 'immutable' }),
      attribute('$ref', 'The user’s URI.', {
        type: 'reference',
        referenceTypes: ['User'],
        mutability: 'immutable',
      }),
      attribute('display', 'The user’s display name.', { mutability: 'readOnly' }),
      attribute('type', 'Always User.', { mutability: 'immutable', canonicalValues: ['User'] }),
    ],
  }),
];

const meta = (resourceType: string, location: string) => ({ resourceType, location });

export function serviceProviderConfig(base: string): Record<string, unknown> {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    documentationUri: `${base.replace(/\/scim\/v2$/, '')}/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description:
          'The organization’s SCIM token (`scim_` and 48 hexadecimal characters), generated by an owner or admin ' +
          'with POST /api/v1/sso/scim-token, sent as `Authorization: Bearer <token>`.',
        primary: true,
      },
    ],
    meta: meta('ServiceProviderConfig', `${base}/ServiceProviderConfig`),
  };
}

export function resourceTypes(base: string): Record<string, unknown>[] {
  return [
    {
      schemas: [SCHEMA.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A member of the organization.',
      schema: SCHEMA.user,
      schemaExtensions: [],
      meta: meta('ResourceType', `${base}/ResourceTypes/User`),
    },
    {
      schemas: [SCHEMA.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'A role bucket: owner, admin, member or reviewer.',
      schema: SCHEMA.group,
      schemaExtensions: [],
      meta: meta('ResourceType', `${base}/ResourceTypes/Group`),
    },
  ];
}

export function schemas(base: string): Record<string, unknown>[] {
  return [
    {
      schemas: [SCHEMA.schema],
      id: SCHEMA.user,
      name: 'User',
      description: 'User account',
      attributes: USER_ATTRIBUTES,
      meta: meta('Schema', `${base}/Schemas/${SCHEMA.user}`),
    },
    {
      schemas: [SCHEMA.schema],
      id: SCHEMA.group,
      name: 'Group',
      description: 'Role bucket',
      attributes: GROUP_ATTRIBUTES,
      meta: meta('Schema', `${base}/Schemas/${SCHEMA.group}`),
    },
  ];
}

/** An RFC 7644 §3.4.2 list response. */
export function listResponse(
  resources: unknown[],
  totalResults: number,
  startIndex: number,
): Record<string, unknown> {
  return {
    schemas: [SCHEMA.listResponse],
    totalResults,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}
