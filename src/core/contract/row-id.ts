import { ApiProperty } from '@nestjs/swagger';

/**
 * The id of a row of a table that grows without bound (messages, events, webhook deliveries, audit entries):
 * 64-bit in PostgreSQL, a JSON number in the API, exact up to 2^53 - 1 (JavaScript's safe integers).
 */
export const ROW_ID_SCHEMA = {
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
} as const;
export const ROW_ID_DESCRIPTION = '64-bit id: a JSON number, exact up to 2^53 - 1';

/** A row id property of a view (see ROW_ID_SCHEMA); the `:id` path parameter is the route's (core/http/openapi.ts). */
export const ApiRowId = (example: number) =>
  ApiProperty({ ...ROW_ID_SCHEMA, example, description: ROW_ID_DESCRIPTION });
