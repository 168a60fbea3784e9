import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Json = Record<string, unknown>;

/**
 * A JSON Schema 2020-12 validator over the served document's component schemas. Object schemas that list their
 * properties are closed here (`unevaluatedProperties: false`) unless they say `additionalProperties`: a member the
 * service sends but the document does not describe fails, so the schemas cannot fall behind what is sent.
 */
export function validatorsOf(document: { components: { schemas: Record<string, unknown> } }) {
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close);
    if (!node || typeof node !== 'object') return node;
    const copy = Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, k === 'example' ? v : close(v)]),
    );
    if (copy.properties && copy.additionalProperties === undefined) copy.unevaluatedProperties = false;
    return copy;
  };
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  // OpenAPI's annotations beside JSON Schema's.
  ajv.addKeyword('example').addKeyword('discriminator');
  for (const format of ['uri', 'email']) ajv.addFormat(format, true);
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) &&
      !Number.isNaN(Date.parse(s)),
  });
  // The document's references, `#/components/schemas/<name>`, become references to the same schemas under $defs.
  const defs = JSON.parse(
    JSON.stringify(close(document.components.schemas)).replaceAll(
      '"#/components/schemas/',
      '"https://gov.test/openapi.json#/$defs/',
    ),
  ) as Json;
  ajv.addSchema({ $id: 'https://gov.test/openapi.json', $defs: defs });
  const cache = new Map<string, ValidateFunction>();
  return {
    ajv,
    of(name: string): ValidateFunction {
      let validate = cache.get(name);
      if (!validate) {
        validate = ajv.compile({ $ref: `https://gov.test/openapi.json#/$defs/${name}` });
        cache.set(name, validate);
      }
      return validate;
    },
  };
}
