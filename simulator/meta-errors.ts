import { fbtraceId } from './meta-json.js';

/** An error response exactly as the Graph API sends it: HTTP status plus `{ error: {...} }`. */
export interface MetaError {
  httpStatus: number;
  body: { error: Record<string, unknown> };
}

/** A WhatsApp Business Platform error: `(#code) Title`, with `error_data.details`. */
export function whatsappError(httpStatus: number, code: number, title: string, details: string): MetaError {
  return {
    httpStatus,
    body: {
      error: {
        message: `(#${code}) ${title}`,
        type: 'OAuthException',
        code,
        error_data: { messaging_product: 'whatsapp', details },
        fbtrace_id: fbtraceId(),
      },
    },
  };
}

/** A Graph API-level error (auth, unknown object, outage): plain message, no `error_data`. */
function graphError(
  httpStatus: number,
  code: number,
  message: string,
  extra: { type?: string; error_subcode?: number; is_transient?: boolean } = {},
): MetaError {
  const { type = 'OAuthException', ...rest } = extra;
  return { httpStatus, body: { error: { message, type, code, ...rest, fbtrace_id: fbtraceId() } } };
}

export const metaErrors = {
  invalidToken: () => graphError(401, 190, 'Invalid OAuth access token - Cannot parse access token'),

  tokenExpired: () =>
    graphError(401, 190, 'Error validating access token: Session has expired on Wednesday, 01-Jan-25 00:00:00 PST.', {
      error_subcode: 463,
    }),

  /** A token that was valid until it was replaced or revoked (`POST /_sim/token`). */
  tokenInvalidated: () =>
    graphError(
      401,
      190,
      'Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.',
      { error_subcode: 460 },
    ),

  /** The token lacks a permission the call needs (e.g. whatsapp_business_management for subscribed_apps). */
  permissionError: () => graphError(403, 200, '(#200) Permissions error'),

  serviceUnavailable: () => graphError(503, 2, 'Service temporarily unavailable', { is_transient: true }),

  wabaRateLimit: () =>
    graphError(
      400,
      80007,
      '(#80007) There have been too many calls to this WhatsApp Business account. Wait a bit and try again.',
    ),

  /** What Meta answers when the object exists but belongs to another business (or does not exist). */
  unsupportedRequest: (method: 'get' | 'post', id: string) =>
    graphError(
      400,
      100,
      `Unsupported ${method} request. Object with ID '${id}' does not exist, cannot be loaded due to missing ` +
        'permissions, or does not support this operation. Please read the Graph API documentation at ' +
        'https://developers.facebook.com/docs/graph-api',
      { type: 'GraphMethodException', error_subcode: 33 },
    ),

  invalidCursor: () => graphError(400, 100, 'Invalid parameter: the paging cursor is not valid.'),

  unknownPath: (path: string) => graphError(400, 2500, `Unknown path components: /${path}`),

  unknownError: () => graphError(500, 1, 'An unknown error has occurred.', { is_transient: true }),

  invalidParameter: (details: string) => whatsappError(400, 100, 'Invalid parameter', details),

  invalidValue: (details: string) => whatsappError(400, 131009, 'Parameter value is not valid', details),

  /** block_users: the user did not message the number in the last 24 hours (Meta's 139100–139103 family). */
  blockNotEligible: () => ({
    code: 139100,
    message: 'Failed to block user',
    error_data: { details: 'Only users who have messaged the business in the last 24 hours can be blocked.' },
  }),

  /** Meta's failure of a marketing message to a user who stopped marketing messages (asynchronous, on a failed status). */
  marketingStopped: () => [
    {
      code: 131050,
      title:
        'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.',
      message:
        'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.',
      error_data: { details: 'The user stopped marketing messages from this business.' },
    },
  ],

  /** The Marketing Messages API takes marketing templates only. */
  notMarketingTemplate: (name: string) =>
    whatsappError(
      400,
      131009,
      'Parameter value is not valid',
      `Template ${name} is not a marketing template; the Marketing Messages API sends marketing templates only.`,
    ),

  /** The Marketing Messages API before the business accepted its terms. */
  marketingNotOnboarded: () =>
    whatsappError(
      400,
      131055,
      'Method not allowed',
      'The business has not onboarded to the Marketing Messages API (terms not accepted).',
    ),

  mediaNotFound: (id: string) =>
    graphError(
      400,
      100,
      `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      { error_subcode: 33 },
    ),

  /**
   * The number's throughput (messages per second of its tier) was reached: Meta's 130429. Meta's docs do not pin its
   * HTTP status; 429 is our choice. Clients must key on `code`.
   */
  throughputReached: () =>
    whatsappError(
      429,
      130429,
      'Rate limit hit',
      'Message failed to send because there were too many messages sent from this phone number in a short period of time.',
    ),

  numberNotRegistered: () =>
    whatsappError(
      400,
      133010,
      'Account not registered',
      'Phone number is not registered on the WhatsApp Business Platform.',
    ),

  templateMissing: (name: string, language: string) =>
    whatsappError(
      404,
      132001,
      'Template name does not exist in the translation',
      `template name (${name}) does not exist in ${language}`,
    ),

  templatePaused: (name: string) =>
    whatsappError(400, 132015, 'Template is Paused', `Template ${name} is paused due to low quality.`),

  templateDisabled: (name: string) =>
    whatsappError(400, 132016, 'Template is Disabled', `Template ${name} has been disabled due to low quality.`),

  paramCount: (component: string, got: number, expected: number) =>
    whatsappError(
      400,
      132000,
      'Number of parameters does not match the expected number of params',
      `${component}: number of localizable_params (${got}) does not match the expected number of params (${expected})`,
    ),

  paramFormat: (component: string, expected: string, received: string) =>
    whatsappError(
      400,
      132012,
      'Parameter format does not match format in the created template',
      `${component}: Format mismatch, expected ${expected}, received ${received}`,
    ),
};
