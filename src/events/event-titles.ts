// The titles of template and account events: one line a person reads in the console's event list (classify.ts).
import { humanise, isRecord, str, type JsonRecord } from './payload-values.js';

export function templateTitle(field: string, v: JsonRecord): string {
  const name = str(v.message_template_name);
  const language = str(v.message_template_language);
  const template = name ? `Template ${name}${language ? ` (${language})` : ''}` : 'Template';
  switch (field) {
    case 'message_template_status_update': {
      const event = str(v.event);
      if (!event) return `${template} status update`;
      const reason = str(v.reason);
      return `${template} ${humanise(event)}${reason && reason !== 'NONE' ? `: ${reason}` : ''}`;
    }
    case 'message_template_quality_update':
      return `${template} quality: ${str(v.previous_quality_score) ?? '?'} → ${str(v.new_quality_score) ?? '?'}`;
    case 'template_category_update':
      return `${template} category: ${str(v.previous_category) ?? '?'} → ${str(v.new_category) ?? '?'}`;
    case 'message_template_components_update':
      return `${template} components updated`;
    default:
      return name ? `${template}: ${field}` : `Update: ${field}`;
  }
}

export const ACCOUNT_TITLES: Record<string, (v: JsonRecord) => string> = {
  account_update: (v) => `Account update: ${str(v.event) ?? 'unknown'}${accountUpdateDetail(v)}`,
  phone_number_quality_update: (v) => {
    const limit = str(v.max_daily_conversations_per_business) ?? str(v.current_limit);
    return `Phone number quality update: ${str(v.event) ?? 'unknown'}${str(v.display_phone_number) ? ` (${str(v.display_phone_number)})` : ''}${limit ? `, limit ${limit}` : ''}`;
  },
  phone_number_name_update: (v) =>
    `Phone number name update: ${str(v.decision) ?? 'unknown'}${str(v.display_phone_number) ? ` (${str(v.display_phone_number)})` : ''}${str(v.requested_verified_name) ? `: ${str(v.requested_verified_name)}` : ''}`,
  account_review_update: (v) => `Account review: ${str(v.decision) ?? 'unknown'}`,
  business_capability_update: () => 'Business capability update',
  user_preferences: () => 'User preferences update',
  account_alerts: (v) =>
    `Account alert: ${str(v.alert_type) ?? str(v.alert_description) ?? 'unknown'}${str(v.alert_status) ? ` (${str(v.alert_status)})` : ''}`,
};

/** What an account_update says beyond its event: the ban state, the restrictions, the violation or the pricing tier. */
function accountUpdateDetail(v: JsonRecord): string {
  const ban = isRecord(v.ban_info) ? str(v.ban_info.waba_ban_state) : undefined;
  if (ban) return `: ${ban}`;
  const restrictions = Array.isArray(v.restriction_info)
    ? v.restriction_info
        .filter(isRecord)
        .map((r) => str(r.restriction_type))
        .filter(Boolean)
    : [];
  if (restrictions.length > 0) return `: ${restrictions.join(', ')}`;
  const violation = isRecord(v.violation_info) ? str(v.violation_info.violation_type) : undefined;
  if (violation) return `: ${violation}`;
  const tier = isRecord(v.volume_tier_info) ? v.volume_tier_info : undefined;
  if (tier && str(tier.tier))
    return `: ${str(tier.pricing_category) ?? 'pricing'} tier ${str(tier.tier)}${str(tier.region) ? ` (${str(tier.region)})` : ''}`;
  return '';
}

export function accountTitle(field: string, v: JsonRecord): string {
  return ACCOUNT_TITLES[field]?.(v) ?? `Update: ${field}`;
}
