// Webhook payloads in Meta's exact format (docs/whatsapp-cloud-api.md §2), built by the
// simulator when it plays Meta, and by the tests and the benches when they post what Meta would. One place, so the
// three never drift apart; it imports only the simulator's fixture types and meta-json.ts.
import type { SimPhoneNumber, SimTemplate } from '../fixture.js';
import { unixSeconds } from '../meta-json.js';

/** What a `messages` webhook names of the receiving number. */
export type WebhookPhone = Pick<SimPhoneNumber, 'id' | 'display_phone_number'>;

/** What template webhooks name of the template. */
export type WebhookTemplate = Pick<SimTemplate, 'id' | 'name' | 'language' | 'category'>;

/** A number by its id, with a display number for where it does not matter (the tests, the benches). */
export const phoneOf = (phoneNumberId: string, displayPhoneNumber = '447700900500'): WebhookPhone => ({
  id: phoneNumberId,
  display_phone_number: displayPhoneNumber,
});

/** The receiving number: the simulator's, or a phone number id alone (tests and benches). */
export type PhoneArg = WebhookPhone | string;
const phoneFor = (phone: PhoneArg): WebhookPhone => (typeof phone === 'string' ? phoneOf(phone) : phone);

export interface MetaWebhook {
  object: 'whatsapp_business_account';
  entry: Record<string, unknown>[];
}

/** The envelope of every webhook: one entry for the business account, with these changes. `time` only where Meta sends it. */
export function webhookOf(wabaId: string, changes: { field: string; value: unknown }[], time?: number): MetaWebhook {
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: wabaId, ...(time === undefined ? {} : { time }), changes }],
  };
}

/** The value of a `messages` change (statuses, inbound messages, errors) or of another field of a number's (`user_preferences`). */
export function messagesValue(phoneArg: PhoneArg, value: Record<string, unknown>): Record<string, unknown> {
  const phone = phoneFor(phoneArg);
  return {
    messaging_product: 'whatsapp',
    // Webhooks carry the display number as digits only, unlike the phone_numbers API.
    metadata: { display_phone_number: phone.display_phone_number.replace(/\D/g, ''), phone_number_id: phone.id },
    ...value,
  };
}

/**
 * Envelope for field `messages` (statuses, inbound messages), or another field of a phone number's (`user_preferences`):
 * no `entry[].time`, as Meta sends it.
 */
export function messagesWebhook(
  wabaId: string,
  phone: PhoneArg,
  value: Record<string, unknown>,
  field = 'messages',
): MetaWebhook {
  return webhookOf(wabaId, [{ field, value: messagesValue(phone, value) }]);
}

/** Envelope for account-level fields, which carry an integer `entry[].time` (now unless given). */
export function fieldWebhook(
  wabaId: string,
  field: string,
  value: Record<string, unknown>,
  time = unixSeconds(),
): MetaWebhook {
  return webhookOf(wabaId, [{ field, value }], time);
}

/** A `statuses[]` item: the message's wamid, its status, Meta's time (unix seconds as a string) and the recipient's digits; `extra` adds pricing, errors, callback data… */
export interface StatusItem {
  id: string;
  status: string;
  timestamp: string;
  recipient_id?: string;
  [key: string]: unknown;
}

export function statusItem(
  wamid: string,
  status: string,
  timestamp: number,
  recipientId = '447700900123',
  extra: Record<string, unknown> = {},
): StatusItem {
  return { id: wamid, status, timestamp: String(timestamp), recipient_id: recipientId, ...extra };
}

/** A `messages` webhook carrying these statuses, in order. */
export function statusesWebhook(wabaId: string, phone: PhoneArg, statuses: StatusItem[]): MetaWebhook {
  return messagesWebhook(wabaId, phone, { statuses });
}

/** A customer's text message: the `messages[]` item and its `contacts[]` entry. */
export interface InboundText {
  from: string;
  id: string;
  /** Unix seconds. */
  timestamp: number | string;
  text: string;
  name?: string;
}

export function inboundTextValue(message: InboundText): Record<string, unknown> {
  return {
    contacts: [{ profile: { name: message.name ?? 'Priya S' }, wa_id: message.from }],
    messages: [
      {
        from: message.from,
        id: message.id,
        timestamp: String(message.timestamp),
        type: 'text',
        text: { body: message.text },
      },
    ],
  };
}

/** A `messages` webhook carrying one customer's text message. */
export function inboundWebhook(wabaId: string, phone: PhoneArg, message: InboundText): MetaWebhook {
  return messagesWebhook(wabaId, phone, inboundTextValue(message));
}

export function templateStatusValue(template: WebhookTemplate, event: string, reason: string): Record<string, unknown> {
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
  for (let i = 0; digits.length < 19; i++)
    digits += String((seed.charCodeAt(i % Math.max(seed.length, 1)) * 7919 + i * 104729) % 10);
  return `${country}.${digits}`;
}

/** phone_number_quality_update: the number by its display number (digits), the limit in both fields Meta documents. */
export function qualityUpdateValue(
  phone: WebhookPhone,
  event: string,
  limit: string | undefined,
  oldLimit: string | undefined,
): Record<string, unknown> {
  return {
    display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
    event,
    ...(oldLimit ? { old_limit: oldLimit } : {}),
    ...(limit ? { current_limit: limit, max_daily_conversations_per_business: limit } : {}),
  };
}

/** phone_number_name_update. */
export function nameUpdateValue(
  phone: WebhookPhone,
  decision: string,
  requestedName: string,
  rejectionReason: string | undefined,
): Record<string, unknown> {
  return {
    display_phone_number: phone.display_phone_number.replace(/\D/g, ''),
    decision,
    requested_verified_name: requestedName,
    ...(rejectionReason ? { rejection_reason: rejectionReason } : { rejection_reason: 'NONE' }),
  };
}

/** message_template_quality_update. */
export function templateQualityValue(
  template: WebhookTemplate,
  previous: string,
  next: string,
): Record<string, unknown> {
  return {
    previous_quality_score: previous,
    new_quality_score: next,
    message_template_id: Number(template.id),
    message_template_name: template.name,
    message_template_language: template.language,
  };
}

/** template_category_update. */
export function templateCategoryValue(
  template: WebhookTemplate,
  previous: string,
  next: string,
): Record<string, unknown> {
  return {
    message_template_id: Number(template.id),
    message_template_name: template.name,
    message_template_language: template.language,
    previous_category: previous,
    new_category: next,
  };
}

/** The customer of a conversation as Meta names it in contacts: phone digits and/or business-scoped user id. */
export interface WebhookUser {
  waId?: string;
  userId?: string;
}

const contactFor = (user: WebhookUser, name?: string): Record<string, unknown> => ({
  ...(name ? { profile: { name } } : {}),
  ...(user.waId ? { wa_id: user.waId } : {}),
  ...(user.userId ? { user_id: user.userId } : {}),
});

/** The app the simulator plays for the business (the escalation partner of Meta Business Agent). */
export const SIM_BUSINESS_APP_ID = '1500000000000001';

/**
 * `messaging_handovers` (assumed shape, docs/whatsapp-cloud-api.md): `type` names the notification object beside it,
 * `control_passed` (the owner passed the conversation: to Meta Business Agent here) or `control_taken` (the
 * business app took it, by sending a service message); each names the previous and new owner by role (and app id).
 */
export function handoverValue(
  phone: PhoneArg,
  user: WebhookUser,
  type: 'control_passed' | 'control_taken',
  metadata?: string,
): Record<string, unknown> {
  const agent = { role: 'ai_agent' };
  const app = { role: 'escalation_partner', app_id: SIM_BUSINESS_APP_ID };
  return messagesValue(phone, {
    contacts: [contactFor(user)],
    type,
    [type]: {
      previous_owner: type === 'control_passed' ? app : agent,
      new_owner: type === 'control_passed' ? agent : app,
      timestamp: String(unixSeconds()),
      ...(metadata ? { metadata } : {}),
    },
  });
}

/** An echo of a message Meta Business Agent sent (on `standby`): `message_echoes[]`, from the business number. */
export function agentEchoValue(phoneArg: PhoneArg, to: string, wamid: string, text: string): Record<string, unknown> {
  const phone = phoneFor(phoneArg);
  return messagesValue(phone, {
    message_echoes: [
      {
        from: phone.display_phone_number.replace(/\D/g, ''),
        to,
        id: wamid,
        timestamp: String(unixSeconds()),
        type: 'text',
        text: { body: text },
      },
    ],
  });
}

/**
 * A `system` message announcing a user's new address: `user_changed_user_id` (`user_id`, `previous_user_id`) or
 * `user_changed_number` (`wa_id`: the new number, sent from the old one, with the previous and new user ids).
 */
export function userChangeValue(
  phone: PhoneArg,
  change: {
    type: 'user_changed_user_id' | 'user_changed_number';
    from?: string;
    waId?: string;
    userId: string;
    previousUserId: string;
    wamid: string;
  },
): Record<string, unknown> {
  const body =
    change.type === 'user_changed_number'
      ? `User changed from ${change.from ?? 'a number'} to ${change.waId ?? 'a new number'}`
      : 'User changed their user id';
  return messagesValue(phone, {
    contacts: [contactFor({ waId: change.waId ?? change.from, userId: change.userId })],
    messages: [
      {
        ...(change.from ? { from: change.from } : {}),
        from_user_id: change.previousUserId,
        id: change.wamid,
        timestamp: String(unixSeconds()),
        type: 'system',
        system: {
          body,
          type: change.type,
          ...(change.waId ? { wa_id: change.waId } : {}),
          user_id: change.userId,
          previous_user_id: change.previousUserId,
        },
      },
    ],
  });
}

/** A `calls` change: a call event (connect, or terminate with status and duration) of a call with a customer. */
export function callValue(
  phoneArg: PhoneArg,
  call: {
    id: string;
    customer: string;
    event: 'connect' | 'terminate';
    direction: 'USER_INITIATED' | 'BUSINESS_INITIATED';
    status?: string;
    duration?: number;
    name?: string;
  },
): Record<string, unknown> {
  const phone = phoneFor(phoneArg);
  const business = phone.display_phone_number.replace(/\D/g, '');
  const userInitiated = call.direction === 'USER_INITIATED';
  const now = unixSeconds();
  return messagesValue(phone, {
    contacts: [contactFor({ waId: call.customer }, call.name ?? 'Sim Customer')],
    calls: [
      {
        id: call.id,
        from: userInitiated ? call.customer : business,
        to: userInitiated ? business : call.customer,
        event: call.event,
        direction: call.direction,
        timestamp: String(now),
        ...(call.event === 'terminate'
          ? {
              status: call.status ?? 'COMPLETED',
              duration: call.duration ?? 0,
              start_time: String(now - (call.duration ?? 0)),
              end_time: String(now),
            }
          : {}),
      },
    ],
  });
}
