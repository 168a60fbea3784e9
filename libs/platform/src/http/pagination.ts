import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Deep pages are refused (400) rather than turned into an offset the database cannot take. */
export const MAX_PAGE = 100_000;
import { Page, type PaginationMeta } from './envelope.js';

/** `page` and `limit` query parameters. Non-numeric values are a 400; a limit above the route's maximum is clamped. */
export class PaginationQueryDto {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_PAGE,
    default: 1,
    description: 'Page number, starting at 1.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Page size; values above the maximum are clamped.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  limit?: number;
}

export interface PageRequest {
  page: number;
  limit: number;
  offset: number;
}

export function pageRequest(
  query: PaginationQueryDto,
  defaults: { limit: number; max: number },
): PageRequest {
  const page = query.page ?? 1;
  const limit = Math.min(query.limit ?? defaults.limit, defaults.max);
  return { page, limit, offset: (page - 1) * limit };
}

export function toPage<T>(items: T[], total: number, req: PageRequest, totalCapped = false): Page<T> {
  const meta: PaginationMeta = {
    page: req.page,
    limit: req.limit,
    total,
    totalPages: total === 0 ? 0 : Math.ceil(total / req.limit),
    ...(totalCapped ? { totalCapped: true as const } : {}),
  };
  return new Page(items, meta);
}
