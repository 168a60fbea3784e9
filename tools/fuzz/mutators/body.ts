// The valid request, and bodies with one mutation derived from the operation's schema.
import fc from 'fast-check';
import type { Mutator } from '../draft.js';
import { encodeJson } from '../json-raw.js';
import { bodyCaseArb } from '../schema-arbitrary.js';
import { conventions, hasJsonBody, jsonMedia, withBody } from './support.js';

export const BODY_MUTATORS: Mutator[] = [
  {
    name: 'valid',
    family: 'valid',
    weight: 3,
    applies: () => true,
    arb: (base) => fc.constant(base),
  },
  {
    name: 'body-one-mutation',
    family: 'body',
    weight: 12,
    applies: hasJsonBody,
    arb: (base, ctx) =>
      bodyCaseArb(ctx.op.body!.content[jsonMedia(ctx.op)!], ctx, ctx.example).map((c) => ({
        ...withBody(base, encodeJson(c.value)),
        mutator: 'body-one-mutation',
        note: c.note,
        // A body that breaks the document's schema (a wrong type, a bound exceeded, a required member missing) must
        // be refused too: the document is the contract clients code against.
        mustRefuse: conventions(ctx)
          ? (c.mustRefuse ??
            (c.violates ? `a body that breaks the documented schema: ${c.violates}` : undefined))
          : undefined,
      })),
  },
];
