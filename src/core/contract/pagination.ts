import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min, ValidateBy } from 'class-validator';

// The list queries of the API's contract (docs/architecture.md, "Use cases and the HTTP edge"). The page object a
// list answers with is core/rows/page.ts (a use case returns it); its Swagger schema is core/http/openapi.ts' PageDoc.

export const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;
/**
 * How deep offset pagination may go: `page * limit` at most this many rows. Each page costs an OFFSET scan
 * (and the list's count), so a deep page is a cheap way to make the database work; narrow the filters
 * (since/until, status, …) to reach older rows instead.
 */
export const MAX_PAGINATED_ROWS = 10_000;

/** `page` within MAX_PAGINATED_ROWS for the request's `limit` (its default when absent). */
const WithinPaginationCap = () =>
  ValidateBy({
    name: 'withinPaginationCap',
    validator: {
      validate: (page: unknown, args) => {
        const limit = (args?.object as { limit?: unknown }).limit;
        return (
          typeof page !== 'number' ||
          page * (typeof limit === 'number' && limit > 0 ? limit : DEFAULT_PAGE_SIZE) <= MAX_PAGINATED_ROWS
        );
      },
      defaultMessage: () =>
        `page * limit must be at most ${MAX_PAGINATED_ROWS}: narrow the filters (since, until, …) to reach older rows`,
    },
  });

/** The `page` query parameter (1-based); out of range, or deeper than MAX_PAGINATED_ROWS → 422. */
export const PageNumber = () =>
  applyDecorators(
    ApiPropertyOptional({ minimum: 1, default: 1, description: `1-based; page * limit at most ${MAX_PAGINATED_ROWS}` }),
    Type(() => Number),
    IsInt({ message: 'page must be an integer' }),
    Min(1, { message: 'page must be at least 1' }),
    WithinPaginationCap(),
  );

/** `limit` (default 20, max 100); out of range → 422. */
export class LimitQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(MAX_PAGE_SIZE, { message: `limit must be at most ${MAX_PAGE_SIZE}` })
  limit: number = DEFAULT_PAGE_SIZE;
}

/** `page` (1-based, default 1) and `limit` (default 20, max 100); out of range, or deeper than MAX_PAGINATED_ROWS → 422. */
export class PageQueryDto extends LimitQueryDto {
  @PageNumber()
  page: number = 1;
}

// A page itself is no HTTP matter (core/rows/page.ts); kept here for the callers not moved yet.
export { skipTake, toPage, type Page } from '../rows/page.js';
