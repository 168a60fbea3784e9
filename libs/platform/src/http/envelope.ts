import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, type Observable } from 'rxjs';

export interface PaginationMeta {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  /** Present (true) when `total` is a lower bound: the list counted this many matches and stopped. */
  totalCapped?: true;
}

/** What a service returns for a paginated list; the interceptor turns it into `{success, data, pagination}`. */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly pagination: PaginationMeta,
  ) {}
}

/** A handler result that already is the full body (status-specific envelopes such as 202 with a code). */
export class RawBody {
  constructor(readonly body: unknown) {}
}

/**
 * The success envelope, `{success: true, data}`, with the `code` of a status-specific success (202 with
 * SVC_FLAGGED_FOR_REVIEW). Error envelopes come from `renderError`; together they are every JSON body of the API.
 */
export function successBody(data: unknown, code?: string): Record<string, unknown> {
  return code === undefined
    ? { success: true, data: data ?? null }
    : { success: true, code, data: data ?? null };
}

const RAW_RESPONSE = 'svc:raw-response';
/** The handler writes its own body (streams, HTML, SCIM, OTLP): the envelope is not applied. */
export const RawResponse = () => SetMetadata(RAW_RESPONSE, true);

@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const raw = this.reflector.getAllAndOverride<boolean>(RAW_RESPONSE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (raw) return next.handle();
    return next.handle().pipe(
      map((value: unknown) => {
        if (value instanceof RawBody) return value.body;
        if (value instanceof Page) return { success: true, data: value.items, pagination: value.pagination };
        return successBody(value);
      }),
    );
  }
}
