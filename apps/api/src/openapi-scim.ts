import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The RFC 7643/7644 shapes SCIM answers and takes (libs/identity/src/scim: `toScimUser`, the groups' `resource`,
 * `listResponse`, the discovery documents, `scimErrorBody`), as named schemas. The SCIM controller describes its
 * bodies as free objects, since they are written by hand rather than by DTO classes; `withScimSchemas` puts these in
 * their place, route by route.
 */
type Schema = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const urns = (urn: string) => ({
  type: 'array',
  items: { type: 'string' },
  minItems: 1,
  example: [urn],
  description: `The schema URNs of the resource (\`${urn}\`).`,
});
const STRING = { type: 'string' } as const;
const BOOLEAN = { type: 'boolean' } as const;
const DATE_TIME = { type: 'string', format: 'date-time' } as const;
const SUPPORTED = { type: 'object', required: ['supported'], properties: { supported: BOOLEAN } } as const;
const PROJECTED =
  ' With `attributes` or `excludedAttributes` (RFC 7644 §3.9) only the attributes asked for are present; `id` ' +
  'and `schemas` always are.';

const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';

const listOf = (resource: string): Schema => ({
  type: 'object',
  description: `An RFC 7644 §3.4.2 ListResponse of ${resource} resources.`,
  required: ['schemas', 'totalResults', 'startIndex', 'itemsPerPage', 'Resources'],
  properties: {
    schemas: urns('urn:ietf:params:scim:api:messages:2.0:ListResponse'),
    totalResults: { type: 'integer', minimum: 0 },
    startIndex: { type: 'integer', minimum: 1 },
    itemsPerPage: { type: 'integer', minimum: 0 },
    Resources: { type: 'array', items: ref(resource) },
  },
});

const EMAIL: Schema = {
  type: 'object',
  required: ['value'],
  properties: {
    value: { type: 'string', maxLength: 254 },
    type: { type: 'string', description: 'work, home or other.', example: 'work' },
    primary: BOOLEAN,
    display: STRING,
  },
};

const NAME: Schema = {
  type: 'object',
  properties: { givenName: STRING, familyName: STRING, formatted: { ...STRING, readOnly: true } },
};

const META_PROPERTIES = {
  resourceType: STRING,
  location: { type: 'string', format: 'uri' },
};

/** The SCIM component schemas, by name. */
export const SCIM_SCHEMAS: Record<string, Schema> = {
  ScimUser: {
    type: 'object',
    description: `An RFC 7643 User: a member of the token’s organization.${PROJECTED}`,
    required: ['schemas', 'id'],
    properties: {
      schemas: urns(USER_URN),
      id: { type: 'string', description: 'The user id.' },
      externalId: { type: 'string', description: 'The identity provider’s id, when it set one.' },
      userName: { type: 'string', description: 'The e-mail address the user signs in with (lower case).' },
      name: NAME,
      displayName: STRING,
      active: { type: 'boolean', description: 'false: deprovisioned in this organization.' },
      emails: {
        type: 'array',
        items: EMAIL,
        description: 'As the identity provider wrote them; else the userName as the work address.',
      },
      groups: {
        type: 'array',
        readOnly: true,
        description: 'The role bucket of the user (change it through the Group).',
        items: {
          type: 'object',
          required: ['value', 'display', '$ref'],
          properties: { value: STRING, display: STRING, $ref: { type: 'string', format: 'uri' } },
        },
      },
      meta: {
        type: 'object',
        readOnly: true,
        properties: {
          ...META_PROPERTIES,
          created: DATE_TIME,
          lastModified: DATE_TIME,
          version: { type: 'string', description: 'A weak version tag (`W/"…"`).' },
        },
      },
    },
  },
  ScimUserRequest: {
    type: 'object',
    description:
      'An RFC 7643 User to provision (POST) or replace (PUT). `userName` (an e-mail address) is required, or else ' +
      'an address in `emails`. POST reads the role from `groups[].display|value` and `roles[].value` through the ' +
      'organization’s role-mapping rules. `id`, `meta`, extension schemas and RFC 7643 attributes the service does ' +
      'not keep are accepted and ignored.',
    properties: {
      schemas: urns(USER_URN),
      userName: { type: 'string', maxLength: 254 },
      externalId: { type: 'string', maxLength: 255 },
      name: {
        type: 'object',
        properties: {
          givenName: { type: 'string', maxLength: 200 },
          familyName: { type: 'string', maxLength: 200 },
        },
      },
      displayName: { type: 'string', maxLength: 200 },
      active: {
        description: 'A boolean, or the strings "True"/"False".',
        oneOf: [BOOLEAN, { type: 'string', enum: ['True', 'False', 'true', 'false'] }],
      },
      emails: { type: 'array', items: EMAIL, maxItems: 10 },
      groups: {
        type: 'array',
        items: { type: 'object', properties: { value: STRING, display: STRING } },
        description: 'POST only: the identity provider’s groups, mapped to a role.',
      },
      roles: {
        type: 'array',
        items: { type: 'object', properties: { value: STRING } },
        description: 'POST only: the identity provider’s roles, mapped to a role.',
      },
    },
  },
  ScimPatchOp: {
    type: 'object',
    description:
      'An RFC 7644 §3.5.2 PatchOp: all operations apply, or none. `op` in any case; a value may be bare, an ' +
      'object or a one-element array.',
    required: ['Operations'],
    properties: {
      schemas: urns('urn:ietf:params:scim:api:messages:2.0:PatchOp'),
      Operations: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['op'],
          properties: {
            op: {
              type: 'string',
              description: '`add`, `replace` or `remove`, in any case.',
              example: 'replace',
            },
            path: {
              type: 'string',
              description: 'An attribute path; `remove` needs one.',
              example: 'active',
            },
            value: {
              description:
                'The new value (not with `remove`): any JSON the path takes, or a partial resource without a path.',
            },
          },
        },
      },
    },
  },
  ScimGroup: {
    type: 'object',
    description: `A role bucket (owner, admin, member, reviewer) with its members.${PROJECTED}`,
    required: ['schemas', 'id'],
    properties: {
      schemas: urns(GROUP_URN),
      id: { type: 'string', enum: ['owner', 'admin', 'member', 'reviewer'] },
      displayName: { type: 'string', enum: ['owner', 'admin', 'member', 'reviewer'] },
      members: {
        type: 'array',
        description: 'At most 1,000.',
        items: {
          type: 'object',
          required: ['value', 'display', 'type', '$ref'],
          properties: {
            value: { type: 'string', description: 'The user id.' },
            display: { type: 'string', description: 'The user’s e-mail address.' },
            type: { type: 'string', enum: ['User'] },
            $ref: { type: 'string', format: 'uri' },
          },
        },
      },
      meta: { type: 'object', readOnly: true, properties: META_PROPERTIES },
    },
  },
  ScimUserListResponse: listOf('ScimUser'),
  ScimGroupListResponse: listOf('ScimGroup'),
  ScimServiceProviderConfig: {
    type: 'object',
    description: 'RFC 7643 §5: what this service provider supports.',
    required: [
      'schemas',
      'patch',
      'bulk',
      'filter',
      'changePassword',
      'sort',
      'etag',
      'authenticationSchemes',
    ],
    properties: {
      schemas: urns('urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'),
      documentationUri: { type: 'string', format: 'uri' },
      patch: SUPPORTED,
      bulk: {
        type: 'object',
        required: ['supported', 'maxOperations', 'maxPayloadSize'],
        properties: {
          supported: BOOLEAN,
          maxOperations: { type: 'integer' },
          maxPayloadSize: { type: 'integer' },
        },
      },
      filter: {
        type: 'object',
        required: ['supported', 'maxResults'],
        properties: { supported: BOOLEAN, maxResults: { type: 'integer' } },
      },
      changePassword: SUPPORTED,
      sort: SUPPORTED,
      etag: SUPPORTED,
      authenticationSchemes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['type', 'name', 'description'],
          properties: { type: STRING, name: STRING, description: STRING, primary: BOOLEAN },
        },
      },
      meta: { type: 'object', properties: META_PROPERTIES },
    },
  },
  ScimResourceType: {
    type: 'object',
    description: 'RFC 7643 §6: a resource type (User or Group).',
    required: ['schemas', 'id', 'name', 'endpoint', 'schema'],
    properties: {
      schemas: urns('urn:ietf:params:scim:schemas:core:2.0:ResourceType'),
      id: { type: 'string', enum: ['User', 'Group'] },
      name: STRING,
      endpoint: { type: 'string', example: '/Users' },
      description: STRING,
      schema: { type: 'string', description: 'The URN of its schema.' },
      schemaExtensions: {
        type: 'array',
        items: { type: 'object', properties: { schema: STRING, required: BOOLEAN } },
      },
      meta: { type: 'object', properties: META_PROPERTIES },
    },
  },
  ScimResourceTypeListResponse: listOf('ScimResourceType'),
  ScimSchemaAttribute: {
    type: 'object',
    description: 'RFC 7643 §7: an attribute definition, with the RFC’s defaults written out.',
    required: ['name', 'type', 'multiValued', 'description', 'required', 'mutability', 'returned'],
    properties: {
      name: STRING,
      type: { type: 'string', enum: ['string', 'boolean', 'complex', 'reference', 'dateTime'] },
      multiValued: BOOLEAN,
      description: STRING,
      required: BOOLEAN,
      caseExact: BOOLEAN,
      mutability: { type: 'string', enum: ['readOnly', 'readWrite', 'immutable', 'writeOnly'] },
      returned: { type: 'string', enum: ['always', 'never', 'default', 'request'] },
      uniqueness: { type: 'string', enum: ['none', 'server', 'global'] },
      subAttributes: { type: 'array', items: ref('ScimSchemaAttribute') },
      referenceTypes: { type: 'array', items: STRING },
      canonicalValues: { type: 'array', items: STRING },
    },
  },
  ScimSchema: {
    type: 'object',
    description: 'RFC 7643 §7: the schema of User or Group, with the attributes this service keeps.',
    required: ['schemas', 'id', 'name', 'attributes'],
    properties: {
      schemas: urns('urn:ietf:params:scim:schemas:core:2.0:Schema'),
      id: { type: 'string', enum: [USER_URN, GROUP_URN] },
      name: STRING,
      description: STRING,
      attributes: { type: 'array', items: ref('ScimSchemaAttribute') },
      meta: { type: 'object', properties: META_PROPERTIES },
    },
  },
  ScimSchemaListResponse: listOf('ScimSchema'),
  ScimError: {
    type: 'object',
    description: 'An RFC 7644 §3.12 error; `status` is the HTTP status as a string.',
    required: ['schemas', 'status', 'detail'],
    properties: {
      schemas: urns('urn:ietf:params:scim:api:messages:2.0:Error'),
      status: { type: 'string', example: '400' },
      scimType: {
        type: 'string',
        enum: ['invalidValue', 'invalidFilter', 'uniqueness', 'invalidSyntax', 'mutability', 'noTarget'],
      },
      detail: STRING,
    },
  },
};

/** The success body of each SCIM operation that has one, and its request body's schema. */
const SCIM_BODIES: Record<string, { response?: string; request?: string }> = {
  scimGetServiceProviderConfig: { response: 'ScimServiceProviderConfig' },
  scimListResourceTypes: { response: 'ScimResourceTypeListResponse' },
  scimGetResourceType: { response: 'ScimResourceType' },
  scimListSchemas: { response: 'ScimSchemaListResponse' },
  scimGetSchema: { response: 'ScimSchema' },
  scimListUsers: { response: 'ScimUserListResponse' },
  scimCreateUser: { response: 'ScimUser', request: 'ScimUserRequest' },
  scimGetUser: { response: 'ScimUser' },
  scimReplaceUser: { response: 'ScimUser', request: 'ScimUserRequest' },
  scimPatchUser: { response: 'ScimUser', request: 'ScimPatchOp' },
  scimDeleteUser: {},
  scimListGroups: { response: 'ScimGroupListResponse' },
  scimCreateGroup: {},
  scimGetGroup: { response: 'ScimGroup' },
  scimPatchGroup: { request: 'ScimPatchOp' },
  scimReplaceGroup: {},
  scimDeleteGroup: {},
};

/**
 * Puts the named SCIM schemas in place of the controller's free objects: each SCIM operation's 2xx body, its
 * request body, and every error body (`ScimError`). Throws for a SCIM operation this file does not know.
 */
export function withScimSchemas(document: OpenAPIObject): OpenAPIObject {
  const schemas = ((document.components ??= {}).schemas ??= {});
  for (const [name, schema] of Object.entries(SCIM_SCHEMAS)) {
    if (schemas[name]) throw new Error(`The SCIM schema ${name} would replace a schema of the same name`);
    schemas[name] = schema;
  }
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/scim/v2/')) continue;
    for (const operation of Object.values(item) as {
      operationId?: string;
      requestBody?: { content?: Record<string, { schema?: unknown }> };
      responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
    }[]) {
      const bodies = SCIM_BODIES[operation.operationId ?? ''];
      if (!bodies)
        throw new Error(`The SCIM operation ${operation.operationId} has no schemas in openapi-scim.ts`);
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        if (!bodies.request)
          throw new Error(`${operation.operationId} takes a body openapi-scim.ts does not name`);
        media.schema = ref(bodies.request);
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          const name = status.startsWith('2') ? bodies.response : 'ScimError';
          if (!name)
            throw new Error(
              `${operation.operationId} answers ${status} with a body openapi-scim.ts does not name`,
            );
          media.schema = ref(name);
        }
      }
    }
  }
  return document;
}
