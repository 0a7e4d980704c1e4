// The send benches' requests: POST /messages of the simulator's hello_world (en_US, no parameters) to varied recipients
// (a prefix of their own per bench, none of the simulator's special numbers 1555000000x), from one tenant's number or
// round-robin over several tenants' (each with its own key pair: a key reaches one business account).
import type { RequestSpec } from 'autocannon';
import type { Tenant } from './bench.js';

const keyHeaders = (t: Tenant) => ({ 'x-access-key': t.key.accessKey, 'x-secret-key': t.key.secretKey });

export function templateSends(
  tenants: Tenant | readonly Tenant[],
  recipientPrefix: string,
): {
  requests: RequestSpec[];
  headers: Record<string, string>;
} {
  const list: readonly Tenant[] = 'key' in tenants ? [tenants] : tenants;
  const one = list.length === 1 ? list[0] : undefined;
  let n = 0;
  return {
    requests: [
      {
        method: 'POST',
        path: '/messages',
        setupRequest: (req) => {
          const t = one ?? list[n % list.length]!;
          return {
            ...req,
            ...(one ? {} : { headers: { ...req.headers, ...keyHeaders(t) } }),
            body: JSON.stringify({
              phoneNumberId: t.account.phoneNumberId,
              to: `${recipientPrefix}${String(n++ % 100_000).padStart(5, '0')}`,
              type: 'template',
              templateName: 'hello_world',
              templateLanguage: 'en_US',
            }),
          };
        },
      },
    ],
    headers: { 'content-type': 'application/json', ...(one ? keyHeaders(one) : {}) },
  };
}
