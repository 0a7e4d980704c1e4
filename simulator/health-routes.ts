import type { IncomingMessage } from 'node:http';
import type { SimContext } from './context.js';
import type { SimAccount, SimPhoneNumber, SimTemplate } from './fixture.js';
import {
  fieldWebhook,
  messagesWebhook,
  nameUpdateValue,
  qualityUpdateValue,
  templateCategoryValue,
  templateQualityValue,
} from './payloads/webhooks.js';

/**
 * Control endpoints for Meta's account-health webhooks (issue 14): each posts one signed webhook in Meta's
 * shape and, where Meta's own state would change, changes the simulator's account the same way (a flagged
 * number is FLAGGED in the phone numbers listing and refused by sends; a recategorised template lists its new
 * category). Shared helpers come from control-routes.ts.
 */
export interface HealthRouteHelpers {
  readBody(req: IncomingMessage): Promise<Record<string, unknown>>;
  accountOf(ctx: SimContext, wabaId: unknown): SimAccount;
  phoneOf(ctx: SimContext, body: Record<string, unknown>): { account: SimAccount; phone: SimPhoneNumber };
  templateOf(account: SimAccount, body: Record<string, unknown>): SimTemplate;
  requireString(body: Record<string, unknown>, key: string): string;
  optionalString(body: Record<string, unknown>, key: string): string | undefined;
  deliver(ctx: SimContext, payload: unknown): Promise<unknown>;
  /** A refused control request (400) with this message. */
  invalid(message: string): Error;
}

/** The answer of a health route, or undefined when `route` is not one of them. */
export async function handleHealthControl(
  ctx: SimContext,
  route: string,
  req: IncomingMessage,
  h: HealthRouteHelpers,
): Promise<unknown> {
  switch (route) {
    case 'POST /_sim/phone-number-quality': {
      // {wabaId, phoneNumberId, event: FLAGGED|UNFLAGGED|DOWNGRADE|UPGRADE|ONBOARDING|THROUGHPUT_UPGRADE, limit?, oldLimit?}
      const body = await h.readBody(req);
      const { account, phone } = h.phoneOf(ctx, body);
      const event = h.requireString(body, 'event');
      if (event === 'FLAGGED') Object.assign(phone, { status: 'FLAGGED', quality_rating: 'RED' });
      if (event === 'UNFLAGGED' && phone.status === 'FLAGGED')
        Object.assign(phone, { status: 'CONNECTED', quality_rating: 'YELLOW' });
      // Meta's automatic upgrade to 1,000 messages per second.
      if (event === 'THROUGHPUT_UPGRADE') phone.throughput = { level: 'HIGH' };
      const value = qualityUpdateValue(
        phone,
        event,
        h.optionalString(body, 'limit'),
        h.optionalString(body, 'oldLimit'),
      );
      return { delivery: await h.deliver(ctx, fieldWebhook(account.id, 'phone_number_quality_update', value)) };
    }
    case 'POST /_sim/phone-number-name': {
      // {wabaId, phoneNumberId, decision: APPROVED|REJECTED|DEFERRED|PENDING, requestedVerifiedName?, rejectionReason?}
      const body = await h.readBody(req);
      const { account, phone } = h.phoneOf(ctx, body);
      const decision = h.requireString(body, 'decision');
      const requested = h.optionalString(body, 'requestedVerifiedName') ?? phone.verified_name;
      if (decision === 'APPROVED') Object.assign(phone, { verified_name: requested, name_status: 'APPROVED' });
      if (decision === 'REJECTED') phone.name_status = 'DECLINED';
      const value = nameUpdateValue(phone, decision, requested, h.optionalString(body, 'rejectionReason'));
      return { delivery: await h.deliver(ctx, fieldWebhook(account.id, 'phone_number_name_update', value)) };
    }
    case 'POST /_sim/template-quality': {
      // {wabaId, templateName, language, newQualityScore, previousQualityScore?}
      const body = await h.readBody(req);
      const account = h.accountOf(ctx, body.wabaId);
      const template = h.templateOf(account, body);
      const value = templateQualityValue(
        template,
        h.optionalString(body, 'previousQualityScore') ?? 'UNKNOWN',
        h.requireString(body, 'newQualityScore'),
      );
      return { delivery: await h.deliver(ctx, fieldWebhook(account.id, 'message_template_quality_update', value)) };
    }
    case 'POST /_sim/template-category': {
      // {wabaId, templateName, language, newCategory}
      const body = await h.readBody(req);
      const account = h.accountOf(ctx, body.wabaId);
      const template = h.templateOf(account, body);
      const previous = template.category;
      template.category = h.requireString(body, 'newCategory') as SimTemplate['category'];
      const value = templateCategoryValue(template, previous, template.category);
      return { delivery: await h.deliver(ctx, fieldWebhook(account.id, 'template_category_update', value)) };
    }
    case 'POST /_sim/account-alerts': {
      // {wabaId, …value}: entity_type, entity_id, alert_severity, alert_status, alert_type, alert_description
      const { wabaId, ...value } = await h.readBody(req);
      const account = h.accountOf(ctx, wabaId);
      return { delivery: await h.deliver(ctx, fieldWebhook(account.id, 'account_alerts', value)) };
    }
    case 'POST /_sim/field': {
      // {wabaId, field, value}: any other field, as given, in the account-level envelope (integer entry.time).
      const body = await h.readBody(req);
      const account = h.accountOf(ctx, body.wabaId);
      const value = body.value;
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw h.invalid('value must be an object');
      return {
        delivery: await h.deliver(
          ctx,
          fieldWebhook(account.id, h.requireString(body, 'field'), value as Record<string, unknown>),
        ),
      };
    }
    case 'POST /_sim/webhook-errors': {
      // {wabaId, phoneNumberId, errors: [{code, title, message, error_data: {details}}]}: webhook-level value.errors.
      const body = await h.readBody(req);
      const { account, phone } = h.phoneOf(ctx, body);
      if (!Array.isArray(body.errors) || body.errors.length === 0) throw h.invalid('errors must be a non-empty array');
      return { delivery: await h.deliver(ctx, messagesWebhook(account.id, phone, { errors: body.errors })) };
    }
    default:
      return undefined;
  }
}
