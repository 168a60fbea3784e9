// What the mutators share with the base request and the null sweep (hostile.ts): which body and parameters an
// operation declares, whether the service's conventions apply to it, and how a draft's body and headers are replaced.
import fc from 'fast-check';
import type { Draft, RequestContext } from '../draft.js';
import { isJsonMedia, type Operation } from '../openapi.js';
import { valueArb, withExample } from '../schema-arbitrary.js';

export const jsonMedia = (op: Operation) => Object.keys(op.body?.content ?? {}).find(isJsonMedia);
export const hasJsonBody = (ctx: RequestContext) => jsonMedia(ctx.op) !== undefined;
/** Operations whose successes are the standard envelope: the service's JSON conventions apply to them. */
export const followsConventions = (op: Operation) =>
  Object.entries(op.responses).some(([status, r]) => {
    if (!status.startsWith('2')) return false;
    const schema = r.content?.['application/json']?.schema;
    return (
      !schema || JSON.stringify(schema).includes('"success"') || JSON.stringify(schema).includes('Envelope')
    );
  });
export const pathParams = (op: Operation) => op.parameters.filter((p) => p.in === 'path');
export const queryParams = (op: Operation) => op.parameters.filter((p) => p.in === 'query');
export const headerParam = (op: Operation, name: string) =>
  op.parameters.find((p) => p.in === 'header' && p.name.toLowerCase() === name.toLowerCase());

export const withBody = (base: Draft, body: Buffer, contentType = 'application/json'): Draft => ({
  ...base,
  headers: [
    ...base.headers.filter(([h]) => h.toLowerCase() !== 'content-type'),
    ['Content-Type', contentType],
  ],
  body,
});
export const setHeader = (base: Draft, name: string, value: string | string[]): [string, string][] => [
  ...base.headers.filter(([h]) => h.toLowerCase() !== name.toLowerCase()),
  ...(Array.isArray(value) ? value : [value]).map((v) => [name, v] as [string, string]),
];
export const refuseIf = (cond: boolean, reason: string) => (cond ? reason : undefined);

/** The JSON body of the base request as a value (for mutators that add to it). */
export function baseJson(ctx: RequestContext): fc.Arbitrary<unknown> {
  const media = jsonMedia(ctx.op);
  return media ? withExample(valueArb(ctx.op.body!.content[media], ctx), ctx.example) : fc.constant({});
}

export const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export const conventions = (ctx: RequestContext) => followsConventions(ctx.op);
