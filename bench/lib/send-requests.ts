// The send benches' requests: POST /messages of the simulator's hello_world (en_US, no parameters) from one tenant's
// number to varied recipients (a prefix of their own per bench, none of the simulator's special numbers 1555000000x).
import type { RequestSpec } from 'autocannon';
import type { Tenant } from './bench.js';

export function templateSends(
  tenant: Tenant,
  recipientPrefix: string,
): {
  requests: RequestSpec[];
  headers: Record<string, string>;
} {
  let n = 0;
  return {
    requests: [
      {
        method: 'POST',
        path: '/messages',
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            phoneNumberId: tenant.account.phoneNumberId,
            to: `${recipientPrefix}${String(n++ % 100_000).padStart(5, '0')}`,
            type: 'template',
            templateName: 'hello_world',
            templateLanguage: 'en_US',
          }),
        }),
      },
    ],
    headers: {
      'content-type': 'application/json',
      'x-access-key': tenant.key.accessKey,
      'x-secret-key': tenant.key.secretKey,
    },
  };
}
