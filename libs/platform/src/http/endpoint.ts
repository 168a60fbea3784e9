import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiBody,
  type ApiBodyOptions,
  ApiConsumes,
  ApiExtraModels,
  ApiHeader,
  type ApiHeaderOptions,
  ApiOperation,
  ApiParam,
  type ApiParamOptions,
  ApiProduces,
  ApiQuery,
  type ApiQueryOptions,
  ApiResponse,
  type ApiResponseOptions,
} from '@nestjs/swagger';
import { Access, type AccessOptions, Public } from '../security/access.decorator.js';
import { ApiEnvelope, ApiErrors, type EnvelopeOptions } from './openapi.js';

/** The success answer in the envelope: a model, `null` for `{success: true, data: null}`, or either with options. */
export type EndpointSuccess = Type<unknown> | null | ({ model: Type<unknown> | null } & EnvelopeOptions);

/**
 * Everything a route says about itself, in one place: who may call it, what it does, what it takes, what it answers.
 * A long description lives in the module's `*.docs.ts` and is referred to by name here.
 */
export interface EndpointDoc {
  /**
   * Who may call the route: the options of `@Access`, or `'public'` (`@Public()`: no credentials read). Left out,
   * the controller's class-level `@Access` applies (deny by default when there is none).
   */
  access?: AccessOptions | 'public';
  summary: string;
  description?: string;
  /** The operation is deprecated (`deprecated: true` in the document). */
  deprecated?: boolean;
  params?: readonly ApiParamOptions[];
  query?: readonly ApiQueryOptions[];
  headers?: readonly ApiHeaderOptions[];
  body?: ApiBodyOptions;
  consumes?: readonly string[];
  produces?: readonly string[];
  /** The success answer, in the envelope (`ApiEnvelope`). */
  success?: EndpointSuccess;
  /** Answers documented as they are: a redirect, a raw body, another envelope (their models in `models`). */
  responses?: readonly ApiResponseOptions[];
  /** Schemas that `responses` refer to by `getSchemaPath`. */
  models?: readonly Type<unknown>[];
  /** Error statuses answered with the error envelope (`ApiErrors`). */
  errors?: readonly number[];
  /** The codes of a status, where they differ from the generic list of `ApiErrors`. */
  errorCodes?: Readonly<Record<number, string>>;
}

/**
 * The one documentation decorator of a route: `@Access` (or `@Public`) and its OpenAPI description together.
 * The parts are applied in the order stacked decorators would be (bottom first), so the document is the same as
 * with one decorator per part.
 */
export function Endpoint(doc: EndpointDoc): MethodDecorator {
  const parts: MethodDecorator[] = [];
  if (doc.errors?.length) parts.push(ApiErrors([...doc.errors], { ...doc.errorCodes }));
  for (const response of [...(doc.responses ?? [])].reverse()) parts.push(ApiResponse(response));
  if (doc.models?.length) parts.push(ApiExtraModels(...doc.models));
  if (doc.success !== undefined) parts.push(envelope(doc.success));
  for (const header of [...(doc.headers ?? [])].reverse()) parts.push(ApiHeader(header));
  if (doc.body) parts.push(ApiBody(doc.body));
  if (doc.produces?.length) parts.push(ApiProduces(...doc.produces));
  if (doc.consumes?.length) parts.push(ApiConsumes(...doc.consumes));
  for (const query of [...(doc.query ?? [])].reverse()) parts.push(ApiQuery(query));
  for (const param of [...(doc.params ?? [])].reverse()) parts.push(ApiParam(param));
  parts.push(
    ApiOperation({
      summary: doc.summary,
      ...(doc.description !== undefined && { description: doc.description }),
      ...(doc.deprecated !== undefined && { deprecated: doc.deprecated }),
    }),
  );
  if (doc.access === 'public') parts.push(Public());
  else if (doc.access) parts.push(Access(doc.access));
  return applyDecorators(...parts);
}

function envelope(success: EndpointSuccess): MethodDecorator {
  if (success === null || typeof success === 'function') return ApiEnvelope(success);
  const { model, ...options } = success;
  return ApiEnvelope(model, options);
}
