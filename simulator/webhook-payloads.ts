import type { SimPhoneNumber, SimTemplate } from './fixture.js';
import { unixSeconds } from './meta-json.js';

/**
 * Envelope for field `messages` (statuses, inbound messages), or another field of a phone number's (`user_preferences`):
 * no `entry[].time`, as Meta sends it.
 */
export function messagesWebhook(wabaId: string, phone: SimPhoneNumber, value: Record<string, unknown>, field = 'messages'): unknown {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field,
            value: {
              messaging_product: 'whatsapp',
              // Webhooks carry the display number as digits only, unlike the phone_numbers API.
              metadata: {
                display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
                phone_number_id: phone.id,
              },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

/** Envelope for account-level fields, which carry an integer `entry[].time`. */
export function fieldWebhook(wabaId: string, field: string, value: Record<string, unknown>): unknown {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, time: unixSeconds(), changes: [{ field, value }] }],
  };
}

export function templateStatusValue(template: SimTemplate, event: string, reason: string): Record<string, unknown> {
  return {
    event,
    // A JSON number here, although the GET API returns template ids as strings.
    message_template_id: Number(template.id),
    message_template_name: template.name,
    message_template_language: template.language,
    reason,
    message_template_category: template.category,
  };
}

/** A business-scoped user id (BSUID) in Meta's format: ISO country code, a dot, digits. */
export function userIdFor(seed: string, country = 'US'): string {
  let digits = '';
  for (let i = 0; digits.length < 19; i++) digits += String((seed.charCodeAt(i % Math.max(seed.length, 1)) * 7919 + i * 104729) % 10);
  return `${country}.${digits}`;
}

/** phone_number_quality_update: the number by its display number (digits), the limit in both fields Meta documents. */
export function qualityUpdateValue(phone: SimPhoneNumber, event: string, limit: string | undefined, oldLimit: string | undefined): Record<string, unknown> {
  return {
    display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
    event,
    ...(oldLimit ? { old_limit: oldLimit } : {}),
    ...(limit ? { current_limit: limit, max_daily_conversations_per_business: limit } : {}),
  };
}

/** phone_number_name_update. */
export function nameUpdateValue(phone: SimPhoneNumber, decision: string, requestedName: string, rejectionReason: string | undefined): Record<string, unknown> {
  return {
    display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
    decision,
    requested_verified_name: requestedName,
    ...(rejectionReason ? { rejection_reason: rejectionReason } : { rejection_reason: 'NONE' }),
  };
}

/** message_template_quality_update. */
export function templateQualityValue(template: SimTemplate, previous: string, next: string): Record<string, unknown> {
  return {
    previous_quality_score: previous,
    new_quality_score: next,
    message_template_id: Number(template.id),
    message_template_name: template.name,
    message_template_language: template.language,
  };
}

/** template_category_update. */
export function templateCategoryValue(template: SimTemplate, previous: string, next: string): Record<string, unknown> {
  return {
    message_template_id: Number(template.id),
    message_template_name: template.name,
    message_template_language: template.language,
    previous_category: previous,
    new_category: next,
  };
}
