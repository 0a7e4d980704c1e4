/** A page of a list, as every paginated use case returns it (and the API answers it in `data`). */
export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  total: number;
  totalPages: number;
  /** Present (true) when counting stopped early: at least `total` items match (GET /messages: MESSAGES_COUNT_LIMIT). */
  totalIsLowerBound?: true;
}

export function toPage<T>(items: T[], total: number, query: { page: number; limit: number }): Page<T> {
  return { items, page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) };
}

/** The rows a page covers: how many to skip, how many to take. */
export function skipTake(query: { page: number; limit: number }): { skip: number; take: number } {
  return { skip: (query.page - 1) * query.limit, take: query.limit };
}
