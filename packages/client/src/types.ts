import type { Client, ClientPathsWithMethod, MaybeOptionalInit } from 'openapi-fetch';
import type { components, paths } from './generated/api.js';

export type { components, paths };

/** The document's named schemas (`Schemas['TraceDto']`). */
export type Schemas = components['schemas'];

/** The openapi-fetch client over the document's paths. */
export type ApiClient = Client<paths>;

/** The methods the service's routes use. */
export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The paths that have this method (`PathsWith<'post'>`). */
export type PathsWith<M extends HttpMethod> = ClientPathsWithMethod<ApiClient, M>;

/** The second argument of a call: `params`, `body`, `headers`, `parseAs`, `signal`… (as openapi-fetch's). */
export type CallInit<P extends PathsWith<M>, M extends HttpMethod> = MaybeOptionalInit<paths[P], M>;

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** The init argument is required when the route has required parameters or a required body. */
export type InitArgs<Init> =
  RequiredKeys<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206 | 207 | '2XX';
type ResponsesOf<Operation> = Operation extends { responses: infer Responses } ? Responses : never;
type ContentOf<Response> = Response extends { content: infer Content } ? Content[keyof Content] : never;

/**
 * The body of a success (any 2xx), as the document declares it: the named schema itself (`Schemas['TracePage']`),
 * so editors show the document's names.
 */
export type SuccessBody<P extends PathsWith<M>, M extends HttpMethod> = {
  [Status in keyof ResponsesOf<paths[P][M]>]: Status extends SuccessStatus
    ? ContentOf<ResponsesOf<paths[P][M]>[Status]>
    : never;
}[keyof ResponsesOf<paths[P][M]>];

/** What a body read with `parseAs` gives (openapi-fetch's `parseAs`; `json`, the default, is the document's type). */
interface ParsedAs {
  text: Awaited<ReturnType<Response['text']>>;
  blob: Awaited<ReturnType<Response['blob']>>;
  arrayBuffer: Awaited<ReturnType<Response['arrayBuffer']>>;
  stream: Response['body'];
}

type Parsed<Body, Init> = Init extends { parseAs: infer As }
  ? As extends keyof ParsedAs
    ? ParsedAs[As]
    : Body
  : Body;

/** The envelope's `data` (`{success: true, data}`), or the body itself when it is not an envelope (SCIM, files). */
export type Unwrapped<Body> = [Body] extends [never]
  ? undefined
  : Body extends { success?: true; data?: infer Data }
    ? Data
    : Body;

/** What `client.get(path)` (and the other methods) resolves to. */
export type ResultOf<P extends PathsWith<M>, M extends HttpMethod, Init = object> = Unwrapped<
  Parsed<SuccessBody<P, M>, Init>
>;

/** `pagination` of a list's envelope. */
export type Pagination = Schemas['PaginationDto'];

/** The GET paths whose answer is a page: `{data: Item[], pagination}`. */
export type PaginatedPath = {
  [P in PathsWith<'get'>]: SuccessBody<P, 'get'> extends { data: readonly unknown[]; pagination: unknown }
    ? P
    : never;
}[PathsWith<'get'>];

/** The item of a paginated list. */
export type PageItem<P extends PaginatedPath> =
  SuccessBody<P, 'get'> extends { data: readonly (infer Item)[] } ? Item : never;

/** One page of a list. */
export interface Page<Item> {
  items: Item[];
  pagination: Pagination;
}

/** A named schema of the document, or the fallback while the document does not declare it. */
export type SchemaOr<Name extends string, Fallback> = Name extends keyof Schemas ? Schemas[Name] : Fallback;
