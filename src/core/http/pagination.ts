import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

export const MAX_PAGE_SIZE = 100;

/** The `page` query parameter (1-based); out of range → 422. */
export const PageNumber = () =>
  applyDecorators(
    ApiPropertyOptional({ minimum: 1, default: 1 }),
    Type(() => Number),
    IsInt({ message: 'page must be an integer' }),
    Min(1, { message: 'page must be at least 1' }),
    Max(1_000_000, { message: 'page must be at most 1000000' }),
  );

/** `limit` (default 20, max 100); out of range → 422. */
export class LimitQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(MAX_PAGE_SIZE, { message: `limit must be at most ${MAX_PAGE_SIZE}` })
  limit: number = 20;
}

/** `page` (1-based, default 1) and `limit` (default 20, max 100); out of range → 422. */
export class PageQueryDto extends LimitQueryDto {
  @PageNumber()
  page: number = 1;
}

/** The list wrapper used by every paginated route. */
export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export function toPage<T>(items: T[], total: number, query: { page: number; limit: number }): Page<T> {
  return { items, page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) };
}

export function skipTake(query: { page: number; limit: number }): { skip: number; take: number } {
  return { skip: (query.page - 1) * query.limit, take: query.limit };
}
