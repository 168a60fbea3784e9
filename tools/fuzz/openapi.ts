// The slice of OpenAPI 3.1 the fuzzer reads: operations, parameters, request bodies, responses, security; and a
// resolver that follows `$ref`s and merges `allOf`, so the other modules see plain schemas.

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  nullable?: boolean;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  exclusiveMaximum?: number | boolean;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  example?: unknown;
  examples?: unknown[];
  default?: unknown;
  description?: string;
}

export interface MediaTypeObject {
  schema?: JsonSchema;
}

export interface ResponseObject {
  description?: string;
  content?: Record<string, MediaTypeObject>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

export interface OperationObject {
  operationId?: string;
  parameters?: ParameterObject[];
  requestBody?: { required?: boolean; content?: Record<string, MediaTypeObject> };
  responses?: Record<string, ResponseObject>;
  security?: Record<string, string[]>[];
}

export interface SecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
  description?: string;
}

export interface OpenApiDoc {
  openapi?: string;
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, JsonSchema>; securitySchemes?: Record<string, SecurityScheme> };
  security?: Record<string, string[]>[];
}

/** One operation of the document, flattened. `id` is what FUZZ_ONLY matches: `POST /api/v1/policies`. */
export interface Operation {
  id: string;
  method: string;
  path: string;
  parameters: ParameterObject[];
  body?: { required: boolean; content: Record<string, JsonSchema> };
  responses: Record<string, ResponseObject>;
  /** Names of the security schemes any of which the operation accepts; empty: public. */
  schemes: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

export class SchemaResolver {
  constructor(private readonly doc: OpenApiDoc) {}

  /** Follows `$ref`s (local `#/…` pointers) and merges `allOf` into one schema; other keywords are kept as is. */
  resolve(schema: JsonSchema | undefined, seen: Set<string> = new Set()): JsonSchema {
    if (!schema) return {};
    let current = schema;
    while (current.$ref) {
      if (seen.has(current.$ref)) return {};
      seen.add(current.$ref);
      const { $ref, ...rest } = current;
      const target = this.pointer($ref);
      current = { ...target, ...rest };
    }
    if (current.allOf && current.allOf.length > 0) {
      const { allOf, ...rest } = current;
      let merged: JsonSchema = rest;
      for (const part of allOf) merged = mergeSchemas(merged, this.resolve(part, new Set(seen)));
      current = merged;
    }
    return current;
  }

  private pointer(ref: string): JsonSchema {
    if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
    let node: unknown = this.doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      node = (node as Record<string, unknown> | undefined)?.[key];
    }
    if (!node || typeof node !== 'object') throw new Error(`unresolvable $ref ${ref}`);
    return node as JsonSchema;
  }
}

/** allOf merge: properties and required are united, the narrower bounds win, other keywords: the later wins. */
export function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...a, ...b };
  if (a.properties || b.properties) out.properties = { ...a.properties, ...b.properties };
  if (a.required || b.required) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  const narrow = (k: 'minLength' | 'minimum' | 'minItems', pick: (x: number, y: number) => number) => {
    if (a[k] !== undefined && b[k] !== undefined) out[k] = pick(a[k], b[k]);
  };
  narrow('minLength', Math.max);
  narrow('minimum', Math.max);
  narrow('minItems', Math.max);
  for (const k of ['maxLength', 'maximum', 'maxItems'] as const) {
    if (a[k] !== undefined && b[k] !== undefined) out[k] = Math.min(a[k], b[k]);
  }
  return out;
}

/** The types a schema allows (from `type`, a type array, `nullable`, `enum`), or undefined when unconstrained. */
export function schemaTypes(schema: JsonSchema): string[] | undefined {
  let types: string[] | undefined;
  if (Array.isArray(schema.type)) types = [...schema.type];
  else if (schema.type) types = [schema.type];
  else if (schema.properties || schema.additionalProperties !== undefined) types = ['object'];
  else if (schema.items) types = ['array'];
  if (types && schema.nullable && !types.includes('null')) types.push('null');
  if (!types && schema.enum) types = [...new Set(schema.enum.map(jsonType))];
  return types;
}

export function isNullable(schema: JsonSchema): boolean {
  const types = schemaTypes(schema);
  if (types?.includes('null')) return true;
  if (schema.enum?.includes(null)) return true;
  return false;
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** A free-form object: any key goes (additionalProperties true or absent) and none is declared. */
export function isFreeForm(schema: JsonSchema): boolean {
  const types = schemaTypes(schema);
  if (!types?.includes('object')) return false;
  if (schema.properties && Object.keys(schema.properties).length > 0) return false;
  return schema.additionalProperties !== false;
}

export function listOperations(doc: OpenApiDoc): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const shared = (item as { parameters?: ParameterObject[] }).parameters ?? [];
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const params = new Map<string, ParameterObject>();
      for (const p of [...shared, ...(op.parameters ?? [])]) params.set(`${p.in}:${p.name.toLowerCase()}`, p);
      let body: Operation['body'];
      if (op.requestBody?.content) {
        const content: Record<string, JsonSchema> = {};
        for (const [media, obj] of Object.entries(op.requestBody.content)) content[media] = obj.schema ?? {};
        body = { required: op.requestBody.required ?? false, content };
      }
      const security = op.security ?? doc.security ?? [];
      const schemes = [...new Set(security.flatMap((req) => Object.keys(req)))];
      ops.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: [...params.values()],
        body,
        responses: op.responses ?? {},
        schemes,
      });
    }
  }
  return ops;
}

/**
 * FUZZ_ONLY: comma-separated entries, each an operation id (`POST /api/v1/policies`, exactly that operation) or,
 * when no id equals it, a case-insensitive substring of ids (`policies`).
 */
export function filterOperations(ops: Operation[], only: string | undefined): Operation[] {
  if (!only?.trim()) return ops;
  const wanted = only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const match = (op: Operation, w: string) =>
    ops.some((o) => o.id === w) ? op.id === w : op.id.toLowerCase().includes(w.toLowerCase());
  return ops.filter((op) => wanted.some((w) => match(op, w)));
}

/** Whether a media type is JSON (`application/json`, `application/problem+json`, with or without parameters). */
export function isJsonMedia(media: string): boolean {
  const base = media.split(';')[0]!.trim().toLowerCase();
  return base === 'application/json' || /^application\/[\w.-]+\+json$/.test(base);
}
