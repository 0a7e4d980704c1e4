import { ApiError } from '../core/http/api-error.js';
import { UpstreamError } from '../upstream/upstream.error.js';

export const RECONNECT_MESSAGE = 'The upstream platform rejected the stored access token; reconnect it with a new token (PUT /business-accounts/:wabaId/access-token)';

/**
 * How a console action reports an upstream failure: a rejected credential is the operator's to fix (424,
 * reconnect); anything transient is the platform's (502, try again).
 */
export function consoleUpstreamError(error: unknown): never {
  if (error instanceof UpstreamError) {
    if (error.errorClass === 'credential') throw new ApiError(424, RECONNECT_MESSAGE);
    if (error.errorClass === 'account_blocked') {
      throw new ApiError(424, `The upstream platform blocked this business account: ${error.title} (${error.code ?? 'no code'})`);
    }
    throw new ApiError(502, `Upstream platform unavailable: ${error.title}`);
  }
  throw error;
}
