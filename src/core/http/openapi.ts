import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import { MAX_PAGE_SIZE } from '../contract/pagination.js';
import { ROW_ID_DESCRIPTION, ROW_ID_SCHEMA } from '../contract/row-id.js';

/** The `:id` path parameter of a route that names a row (its schema: core/contract/row-id.ts). */
export const ApiRowIdParam = (description: string) =>
  ApiParam({ name: 'id', schema: { ...ROW_ID_SCHEMA }, description: `${description} (${ROW_ID_DESCRIPTION})` });

/** One failing field of a 422 (or of a 4xx naming fields). */
@ApiSchema({ name: 'FieldError' })
export class FieldErrorDoc {
  @ApiProperty({ example: 'to' })
  field!: string;

  @ApiProperty({ example: 'to must be a phone number in E.164 digits' })
  message!: string;
}

/** Every error answer: `{statusCode, message, errors?}`. */
@ApiSchema({ name: 'ErrorEnvelope' })
export class ErrorEnvelopeDoc {
  @ApiProperty({ example: 422 })
  statusCode!: number;

  @ApiProperty({ example: 'Field Validation Failed' })
  message!: string;

  @ApiPropertyOptional({
    type: [FieldErrorDoc],
    description: 'One item per failing field (422), dotted paths for nested fields',
  })
  errors?: FieldErrorDoc[];
}

/** The page object of every list: `{items, page, limit, total, totalPages}`. */
@ApiSchema({ name: 'PageInfo' })
export class PageDoc {
  @ApiProperty({ example: 1, minimum: 1 })
  page!: number;

  @ApiProperty({ example: 20, minimum: 1, maximum: MAX_PAGE_SIZE })
  limit!: number;

  @ApiProperty({ example: 1, description: 'Items matching the filters' })
  total!: number;

  @ApiProperty({ example: 1 })
  totalPages!: number;

  @ApiProperty({
    required: false,
    enum: [true],
    description:
      'Present (true) when counting stopped early and `total` (and `totalPages`) is a lower bound: GET /messages counts up to MESSAGES_COUNT_LIMIT (10,000) matching messages',
  })
  totalIsLowerBound?: true;
}

const successEnvelope = (status: number, data: Record<string, unknown>) => ({
  type: 'object',
  required: ['statusCode', 'message', 'data'],
  properties: {
    statusCode: { type: 'integer', example: status },
    message: { type: 'string', example: 'Success' },
    data,
  },
});

/**
 * A success answer in the envelope with `data` of `model`: `{statusCode, message: "Success", data: Model}`
 * (an array of them with `isArray`).
 */
export function ApiEnvelope(
  model: Type<unknown>,
  opts: { status?: number; description?: string; isArray?: boolean } = {},
) {
  const status = opts.status ?? 200;
  const ref = { $ref: getSchemaPath(model) };
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description: opts.description ?? 'Success',
      schema: successEnvelope(status, opts.isArray ? { type: 'array', items: ref } : ref),
    }),
  );
}

/**
 * A list answer: the envelope with `data` a page object whose `items` are `model`s; with `or`, `data` is either
 * that page or an `or` (another list shape of the same route, such as a feed).
 */
export function ApiPage(model: Type<unknown>, opts: { description?: string; or?: Type<unknown> } = {}) {
  const page = {
    allOf: [
      { $ref: getSchemaPath(PageDoc) },
      {
        type: 'object',
        required: ['items'],
        properties: { items: { type: 'array', items: { $ref: getSchemaPath(model) } } },
      },
    ],
  };
  return applyDecorators(
    ApiExtraModels(model, PageDoc, ...(opts.or ? [opts.or] : [])),
    ApiResponse({
      status: 200,
      description: opts.description ?? 'One page, newest first',
      schema: successEnvelope(200, opts.or ? { oneOf: [page, { $ref: getSchemaPath(opts.or) }] } : page),
    }),
  );
}

/**
 * Error answers, each `{statusCode, message, errors?}` (ErrorEnvelopeDoc) with its own description. With
 * `data`, the envelope may also carry `data` of that model (e.g. the stored failed message of a send the
 * upstream platform rejected).
 */
export function ApiErrors(errors: Record<number, string>, opts: { data?: Type<unknown> } = {}) {
  const data = opts.data;
  const schema = data
    ? {
        allOf: [
          { $ref: getSchemaPath(ErrorEnvelopeDoc) },
          { type: 'object', properties: { data: { $ref: getSchemaPath(data) } } },
        ],
      }
    : undefined;
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeDoc, ...(data ? [data] : [])),
    ...Object.entries(errors).map(([status, description]) =>
      schema
        ? ApiResponse({ status: Number(status), description, schema })
        : ApiResponse({ status: Number(status), description, type: ErrorEnvelopeDoc }),
    ),
  );
}

/**
 * A console route that calls the upstream platform with the business account's stored token: its 424 (reconnect), 429
 * (the upstream's rate limit, or `tooMany`) and 502 (unavailable), each saying what was left undone (`undone`).
 */
export const ApiUpstreamErrors = (undone: string, tooMany?: string) =>
  applyDecorators(
    ApiResponse({
      status: 424,
      description: 'The upstream platform rejected the stored token: reconnect the business account',
    }),
    ApiResponse({
      status: 429,
      description: tooMany ?? `Upstream rate limit: try again after Retry-After seconds; ${undone}`,
    }),
    ApiResponse({ status: 502, description: `Upstream platform unavailable; ${undone}` }),
  );
