import { Param, type PipeTransform } from '@nestjs/common';
import { NotFound } from '../errors/domain-errors.js';
import { isRowId } from '../rows/row-id.js';

/**
 * A path's row id (messages, events, deliveries, campaigns): decimal digits naming a positive safe integer (ids are
 * 64-bit in PostgreSQL and JSON numbers in the API). Anything else (`abc`, `1.5`, `0`, twenty digits) names no row,
 * so every such route answers it alike: 404 with the route's own "not found", as for an id nobody has.
 */
export class ParseRowIdPipe implements PipeTransform<string, number> {
  constructor(private readonly notFound: string) {}

  transform(value: string): number {
    const id = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
    if (!isRowId(id)) throw new NotFound(this.notFound);
    return id;
  }
}

/** `@RowId(MESSAGE_NOT_FOUND) id: number`: the route's `id` path parameter through ParseRowIdPipe. */
export const RowId = (notFound: string) => Param('id', new ParseRowIdPipe(notFound));
