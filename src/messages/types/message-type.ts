import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsDefined, IsObject, ValidateIf, ValidateNested } from 'class-validator';
import type { TemplateSend, TextSend } from '../../upstream/upstream.types.js';

/**
 * What one message type of POST /messages is, in one place: its request fields (shape, validation, Swagger), its
 * examples, its upstream body, what is stored of it and whether the 24 h window applies. The send DTO, the Swagger
 * schemas and examples, the send path, the pre-send checks and the upstream union derive from the catalogue
 * (catalogue.ts), one file per type. Meta's own checks of a send are the simulator's (simulator/content-checks.ts),
 * kept apart on purpose; test/contract checks the two agree on the types and the examples.
 */
export interface MessageTypeDefinition<T extends string = string, R extends object = object> {
  readonly type: T;
  /** Its fields on the send request, each with its validation and Swagger decorators, in the order they are validated. */
  readonly fields: { readonly [K in keyof R]-?: PropertyDecorator };
  /** The fields its own Swagger schema marks required (all of them unless said). */
  readonly required?: readonly (keyof R & string)[];
  /** Swagger examples of the request body, each as sent with a sender and a recipient (added by the schema). */
  readonly examples: Readonly<Record<string, { summary: string; value: { type: T } & R }>>;
  /** `any_time` (templates: business-initiated) or `service_window` (only within 24 h of the customer's last message). */
  readonly window: WindowRule;
  /** The type's part of the upstream body (the send path adds the recipient, the callback data and the context). */
  upstream(request: R): UpstreamPart<T>;
  /** What is stored as the message's content (and shown as `content`), before the reply context is added. */
  stored(request: R): Record<string, unknown>;
}

export type WindowRule = 'any_time' | 'service_window';

/**
 * The type-specific part of an upstream send: a template, a text, or any other type's content object (array for
 * contacts) in Meta's shape, which goes under the key named after the type (upstream.types.ts' ContentSend).
 */
export type UpstreamPart<T extends string> = T extends 'template'
  ? Pick<TemplateSend, 'type' | 'template'>
  : T extends 'text'
    ? Pick<TextSend, 'type' | 'text'>
    : { type: T; content: object };

/** A definition, checked for its type and fields. */
export const defineMessageType = <T extends string, R extends object>(
  definition: MessageTypeDefinition<T, R>,
): MessageTypeDefinition<T, R> => definition;

/** Several property decorators as one, applied in the order given. */
export const apply =
  (decorators: PropertyDecorator[]): PropertyDecorator =>
  (target, key) =>
    decorators.forEach((d) => d(target, key));

/** Several property decorators as one, as if stacked on the property in this order (the last one applies first, as TypeScript does). */
export const stacked = (decorators: PropertyDecorator[]): PropertyDecorator => apply([...decorators].reverse());

/** A field validation has already required for this type: present, or the request did not pass validation. */
export function given<V>(value: V | undefined, field: string): V {
  if (value === undefined) throw new Error(`${field} is missing from a validated send request`);
  return value;
}

/**
 * The content field of a type whose content is an object in Meta's own shape under the field named after it:
 * required, an object, validated as `cls` when the message's type is `type`; otherwise not looked at.
 */
export function contentField(type: string, cls: new () => object, note?: string): PropertyDecorator {
  return apply([
    ApiPropertyOptional({ type: cls, description: `Required when type is ${type}${note ? `: ${note}` : ''}` }),
    ValidateIf((m: { type?: string }) => m.type === type),
    IsDefined({ message: `${type} is required for ${type} messages` }),
    IsObject({ message: `${type} must be an object` }),
    ValidateNested(),
    Type(() => cls),
  ]);
}
