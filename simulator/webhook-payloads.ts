import type { SimPhoneNumber, SimTemplate } from './fixture.js';
import { unixSeconds } from './meta-json.js';

/** Envelope for field `messages` (statuses, inbound messages): no `entry[].time`, as Meta sends it. */
export function messagesWebhook(wabaId: string, phone: SimPhoneNumber, value: Record<string, unknown>): unknown {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: 'messages',
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
