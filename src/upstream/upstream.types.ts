/**
 * Wire types of Meta's WhatsApp Cloud API as this client uses them (snake_case, as sent by Meta), plus the
 * client's own call shapes. See docs/whatsapp-cloud-api.md.
 */

/**
 * Meta's business-scoped user id (BSUID): an ISO country code, a dot, up to 128 alphanumerics; the parent form
 * (business portfolio level) is `CC.ENT.<id>`.
 */
export const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

export interface UpstreamBusinessAccount {
  id: string;
  name: string;
  /** `ONBOARDED` once the business may use the Marketing Messages API; other values (`INELIGIBLE_*`, …) mean not. */
  marketing_messages_onboarding_status?: string;
}

/** `POST|DELETE /{phone-number-id}/block_users` answers. */
export interface BlockUsersResponse {
  messaging_product: 'whatsapp';
  block_users: {
    added_users?: { input: string; wa_id: string }[];
    removed_users?: { input: string; wa_id: string }[];
    failed_users?: {
      input: string;
      wa_id?: string;
      errors?: { code: number; message?: string; error_data?: { details?: string } }[];
    }[];
  };
}

/** One user of `GET /{phone-number-id}/block_users`. */
export interface UpstreamBlockedUser {
  messaging_product?: 'whatsapp';
  wa_id: string;
}

/** What a block or unblock did per user: done (with Meta's wa_id) or refused with Meta's reason. */
export interface BlockOutcome {
  input: string;
  waId: string | null;
  error: { code: number | null; message: string } | null;
}

/** One entry of `GET /{waba-id}/subscribed_apps`: an app that receives the account's webhooks. */
export interface UpstreamSubscribedApp {
  whatsapp_business_api_data: { id: string; link?: string; name?: string };
}

/** What Graph API writes such as `POST /{waba-id}/subscribed_apps` answer. */
export interface UpstreamSuccess {
  success: boolean;
}

export interface UpstreamPhoneNumber {
  id: string;
  /** Human format with `+` and spaces, e.g. "+44 7700 900500" (webhooks send digits only). */
  display_phone_number: string;
  verified_name: string;
  quality_rating: string;
  code_verification_status?: string;
  /** Only CONNECTED numbers can send. */
  status: string;
  name_status?: string;
  platform_type?: string;
  throughput?: { level: string };
}

export interface UpstreamTemplateButton {
  type: string;
  /** OTP buttons of authentication templates: COPY_CODE, ONE_TAP or ZERO_TAP. */
  otp_type?: string;
  text: string;
  url?: string;
  phone_number?: string;
  example?: string[];
}

export interface UpstreamTemplateComponent {
  type: string;
  format?: string;
  text?: string;
  buttons?: UpstreamTemplateButton[];
  example?: Record<string, unknown>;
}

/** Names are not unique: a template is identified by (business account, name, language). */
export interface UpstreamTemplate {
  /** A string here, although template webhooks carry it as a JSON number. */
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  parameter_format?: 'POSITIONAL' | 'NAMED';
  components: UpstreamTemplateComponent[];
}

/** `POST /{waba-id}/message_templates`: a new template as Meta takes it (components in Meta's own shape). */
export interface TemplateDefinition {
  name: string;
  language: string;
  category: string;
  parameter_format?: 'POSITIONAL' | 'NAMED';
  components: object[];
}

/** What Meta answers a template creation: its id, the review status (PENDING, or at once APPROVED/REJECTED) and category. */
export interface CreatedTemplate {
  id: string;
  status: string;
  category: string;
}

/** A page of a Graph API list; `paging.next` is present only when more pages follow. */
export interface GraphPage<T> {
  data: T[];
  paging?: { cursors?: { before?: string; after?: string }; next?: string };
}

export interface SendMessageResponse {
  messaging_product: 'whatsapp';
  contacts: { input: string; wa_id: string }[];
  messages: { id: string; message_status?: string }[];
}

/** One template parameter; named templates set `parameter_name`. Media parameters carry e.g. `image`. */
export interface TemplateParameter {
  type: 'text' | 'currency' | 'date_time' | 'image' | 'video' | 'document' | 'location' | 'payload';
  parameter_name?: string;
  text?: string;
  image?: { link: string };
  video?: { link: string };
  document?: { link: string; filename?: string };
  payload?: string;
  [key: string]: unknown;
}

export interface TemplateComponentValues {
  type: 'header' | 'body' | 'button';
  /** Buttons only: which button (`url`, `quick_reply`, …) and its position as a string ("0"). */
  sub_type?: string;
  index?: string;
  parameters: TemplateParameter[];
}

interface SendBase {
  /** E.164 digits, with or without a leading `+`; always sent upstream as `+<digits>`. Exactly one of `to` and `recipient`. */
  to?: string;
  /** A business-scoped user id (BSUID), sent as Meta's `recipient` (and no `to`). */
  recipient?: string;
  /** Echoed by Meta in this message's status webhooks. */
  bizOpaqueCallbackData?: string;
  /** A reply: WhatsApp quotes this message (its wamid). */
  context?: { message_id: string };
}

export interface TemplateSend extends SendBase {
  type: 'template';
  template: { name: string; language: { code: string }; components?: TemplateComponentValues[] };
}

export interface TextSend extends SendBase {
  type: 'text';
  text: { body: string; preview_url?: boolean };
}

/**
 * Every other type of the message-type catalogue (messages/types/): its content object (array for contacts) goes, in
 * Meta's shape, under the key named after the type. The catalogue checks this list against its own at compile time
 * (messages/types/catalogue.ts: a type it gains fails there until named here); the client sits below it and does not
 * import it.
 */
export interface ContentSend extends SendBase {
  type: 'image' | 'video' | 'audio' | 'document' | 'sticker' | 'location' | 'contacts' | 'interactive' | 'reaction';
  content: object;
}

export type SendPayload = TemplateSend | TextSend | ContentSend;

/** `POST /{phone-number-id}/media` answers the new media object's id. */
export interface UploadMediaResponse {
  id: string;
}

/** `GET /{media-id}`: a short-lived URL downloadable with the same token. */
export interface MediaInfo {
  url: string;
  mime_type: string;
  sha256?: string;
  file_size?: number | string;
  id: string;
}

export interface SendResult {
  wamid: string;
  /** WhatsApp's id for the recipient; may differ from `input`. */
  waId: string;
  /** The number as Meta received it. */
  input: string;
  /** `accepted` or `held_for_quality_assessment` for templates; absent for other types. */
  messageStatus?: string;
}
