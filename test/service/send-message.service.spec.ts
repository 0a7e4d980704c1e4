import { MemorySends } from '../utils/in-memory/sends.js';
import type { ApiKeyScope } from '../../src/auth/request-scope.js';
import { Conflict, InvalidInput, type DomainErrorKind } from '../../src/core/errors/domain-errors.js';
import { UpstreamError } from '../../src/upstream/upstream.error.js';
import type { SendPayload, SendResult } from '../../src/upstream/upstream.types.js';
import type { SendMessageDto } from '../../src/messages/dto/send-message.dto.js';
import { PacerUnavailable, type NumberPacer } from '../../src/messages/pacing/number-pacer.js';
import { IdempotencyService } from '../../src/messages/send/idempotency.service.js';
import type { SendPlan } from '../../src/messages/send/pre-send-checks.js';
import { SendMessageService } from '../../src/messages/send/send-message.service.js';
import type { SendOutcome } from '../../src/messages/send/send-outcome.js';

const scope = {
  apiKeyId: 'key-1',
  organizationId: 'org-1',
  businessAccountId: 'ba-1',
  wabaId: 'waba-1',
  credentialVersion: 'v1',
} as ApiKeyScope;
const text = (body = 'Your parcel is ready.'): SendMessageDto => ({
  phoneNumberId: '402000000000011',
  to: '447700900123',
  type: 'text',
  text: { body },
});
const template = {
  phoneNumberId: '402000000000011',
  to: '447700900123',
  type: 'template',
  templateName: 'parcel_update',
  templateLanguage: 'en_GB',
  components: [],
} as SendMessageDto;
const CLOUD: SendPlan = { upstreamApi: 'cloud_api', throughputLevel: 'STANDARD' };

/** What the fake upstream does with a send: answer, throw, or let a status webhook arrive first. */
type Upstream = (payload: SendPayload, store: MemorySends, messageId: number) => Promise<SendResult>;
const accept: Upstream = () => Promise.resolve({ wamid: 'wamid.OK', waId: '447700900123', input: '447700900123' });
const refuse =
  (code: number, httpStatus: number, retryAfter?: string): Upstream =>
  () =>
    Promise.reject(
      UpstreamError.fromResponse(
        'sendMessage',
        httpStatus,
        { error: { code, message: `(#${code}) Meta says no` } },
        retryAfter,
        [],
      ),
    );
const timeOut: Upstream = () =>
  Promise.reject(UpstreamError.fromTransport('sendMessage', { code: 'ECONNABORTED' }, 2000));
/** A status webhook for this very message (found by its callback data) lands while the call is in flight. */
const statusFirst =
  (then: Upstream): Upstream =>
  (payload, store, id) => {
    store.statusArrives(id, 'delivered', 'wamid.OK');
    return then(payload, store, id);
  };

interface Options {
  upstream?: Upstream;
  plan?: SendPlan;
  /** What the pre-send checks throw instead of answering a plan. */
  refusal?: Error;
  pace?: Awaited<ReturnType<NumberPacer['acquire']>> | 'unavailable';
}

function setup(options: Options = {}) {
  const store = new MemorySends();
  const seen = {
    upstream: [] as { api: string; payload: SendPayload }[],
    labels: [] as string[],
    credentialRejections: [] as string[],
    forgotten: [] as string[],
    holds: [] as number[],
  };
  const call = (api: string) => (_token: string, _phoneNumberId: string, payload: SendPayload) => {
    seen.upstream.push({ api, payload });
    const id = Number(payload.bizOpaqueCallbackData?.replace('bm:', ''));
    return (options.upstream ?? accept)(payload, store, id);
  };
  const checks = {
    assertSendable: () => (options.refusal ? Promise.reject(options.refusal) : Promise.resolve(options.plan ?? CLOUD)),
    forget: (businessAccountId: string) => void seen.forgotten.push(businessAccountId),
  };
  const pacer = {
    acquire: () =>
      options.pace === 'unavailable'
        ? Promise.reject(new PacerUnavailable('down'))
        : Promise.resolve(
            options.pace ?? { ok: true as const, slot: { notBefore: Date.now(), lateAfter: Date.now() + 1000 } },
          ),
    until: () => Promise.resolve(true),
    holdBack: (_phoneNumberId: string, ms: number) => {
      seen.holds.push(ms);
      return Promise.resolve();
    },
  };
  const credentialChecks = {
    recordRejectedBySend: (_scope: ApiKeyScope, reason: string) => {
      seen.credentialRejections.push(reason);
      return Promise.resolve();
    },
  };
  const metrics = { sends: { inc: (labels: { outcome: string }) => seen.labels.push(labels.outcome) } };
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const service = new SendMessageService(
    store,
    checks,
    new IdempotencyService(store),
    { tokenFor: () => Promise.resolve('token') },
    credentialChecks,
    { sendMessage: call('cloud_api'), sendMarketingMessage: call('marketing_messages') },
    pacer,
    metrics,
    quiet,
  );
  return { service, store, seen };
}

/** The outcome's kind: accepted, replayed, or the rejection's domain kind. */
const kindOf = (o: SendOutcome): string => (o.outcome === 'rejected' ? o.reason.kind : o.outcome);

/** Every outcome of an attempt that reaches the store, and whether an Idempotency-Key keeps it for replays. */
const OUTCOMES: {
  name: string;
  options: Options;
  kind: 'accepted' | DomainErrorKind;
  status: string;
  final: boolean;
  label: string;
}[] = [
  { name: 'accepted', options: {}, kind: 'accepted', status: 'sent', final: true, label: 'accepted' },
  {
    name: 'rejected as sent (131026)',
    options: { upstream: refuse(131026, 400) },
    kind: 'upstream_rejected',
    status: 'failed',
    final: true,
    label: 'rejected',
  },
  {
    name: 'token rejected (190)',
    options: { upstream: refuse(190, 401) },
    kind: 'credential_rejected',
    status: 'failed',
    final: true,
    label: 'rejected',
  },
  {
    name: 'account blocked (368)',
    options: { upstream: refuse(368, 400) },
    kind: 'account_blocked',
    status: 'failed',
    final: true,
    label: 'rejected',
  },
  {
    name: 'upstream rate limit (130429)',
    options: { upstream: refuse(130429, 429, '7') },
    kind: 'upstream_rate_limited',
    status: 'failed',
    final: false,
    label: 'rate_limited',
  },
  {
    name: 'upstream timed out',
    options: { upstream: timeOut },
    kind: 'upstream_unavailable',
    status: 'failed',
    final: false,
    label: 'upstream_unavailable',
  },
  {
    name: 'number at its throughput (paced)',
    options: { pace: { ok: false, retryAfterMs: 1500, held: false } },
    kind: 'too_many_attempts',
    status: 'failed',
    final: false,
    label: 'rate_limited',
  },
];

describe('SendMessageService', () => {
  describe.each(OUTCOMES)('$name', ({ options, kind, status, final, label }) => {
    it('without a key: one stored attempt, the outcome and its metric', async () => {
      const { service, store, seen } = setup(options);
      const outcome = await service.send(scope, text());
      expect(kindOf(outcome)).toBe(kind);
      expect(outcome.outcome === 'replayed' ? undefined : outcome.message.status).toBe(status);
      expect([...store.messages.values()].map((m) => m.status)).toEqual([status]);
      expect(store.keys.size).toBe(0);
      expect(seen.labels).toEqual([label]);
    });

    it(`new key: ${final ? 'kept, and the same key and body replay it without a second send' : 'released, and the same key and body send again'}`, async () => {
      const { service, store, seen } = setup(options);
      const first = await service.send(scope, text(), 'k-1');
      expect(kindOf(first)).toBe(kind);
      expect(store.keys.get(`key-1\u0000k-1`)?.state).toBe(final ? 'completed' : undefined);

      const again = await service.send(scope, text(), 'k-1');
      if (final) {
        expect(again).toEqual({ outcome: 'replayed', earlier: first });
        expect(store.messages.size).toBe(1);
        expect(seen.labels).toEqual([label, 'replayed']);
      } else {
        expect(kindOf(again)).toBe(kind);
        expect(store.messages.size).toBe(2);
        expect(seen.labels).toEqual([label, label]);
      }
    });

    it(`the key with another body: ${final ? 'refused on Idempotency-Key, nothing stored' : 'a new claim (the first was released)'}`, async () => {
      const { service, store } = setup(options);
      await service.send(scope, text(), 'k-1');
      const other = service.send(scope, text('Something else'), 'k-1');
      if (final) {
        await expect(other).rejects.toThrow(InvalidInput);
        await expect(service.send(scope, text('Something else'), 'k-1')).rejects.toMatchObject({
          fields: [
            {
              field: 'Idempotency-Key',
              message: 'this Idempotency-Key was already used with a different request body',
            },
          ],
        });
        expect(store.messages.size).toBe(1);
      } else {
        expect(kindOf(await other)).toBe(kind);
        expect(store.messages.size).toBe(2);
      }
    });
  });

  describe('what each outcome records', () => {
    it('accepted: sent with the wamid, called with the message’s callback data', async () => {
      const { service, seen } = setup();
      const outcome = await service.send(scope, text());
      expect(outcome).toMatchObject({
        outcome: 'accepted',
        message: { status: 'sent', upstreamMessageId: 'wamid.OK' },
      });
      expect(seen.upstream).toEqual([
        {
          api: 'cloud_api',
          payload: expect.objectContaining({
            type: 'text',
            bizOpaqueCallbackData: 'bm:1',
            to: '447700900123',
          }) as unknown,
        },
      ]);
    });

    it('a MARKETING template of an onboarded account goes through the Marketing Messages API', async () => {
      const { service, seen } = setup({ plan: { upstreamApi: 'marketing_messages', throughputLevel: null } });
      expect(kindOf(await service.send(scope, template))).toBe('accepted');
      expect(seen.upstream.map((c) => c.api)).toEqual(['marketing_messages']);
    });

    it('an upstream rejection keeps Meta’s error on the stored message', async () => {
      const { service } = setup({ upstream: refuse(131026, 400) });
      const outcome = await service.send(scope, text());
      expect(outcome).toMatchObject({
        outcome: 'rejected',
        reason: { kind: 'upstream_rejected', message: 'Upstream rejected the message: Meta says no (131026)' },
        message: { status: 'failed', errorCode: 131026, errorCategory: 'permanent' },
      });
    });

    it('a rejected token is recorded, so the next sends are refused before any upstream call', async () => {
      const { service, seen } = setup({ upstream: refuse(190, 401) });
      await service.send(scope, text());
      expect(seen.credentialRejections).toHaveLength(1);
      // This process's cached account state goes at once: its next send reads the rejection, not the old state.
      expect(seen.forgotten).toEqual([scope.businessAccountId]);
    });

    it('Meta’s 130429 holds the number back for its Retry-After and says so', async () => {
      const { service, seen } = setup({ upstream: refuse(130429, 429, '7') });
      const outcome = await service.send(scope, text());
      expect(seen.holds).toEqual([7000]);
      expect(outcome).toMatchObject({
        outcome: 'rejected',
        reason: {
          kind: 'upstream_rate_limited',
          retryAfterSeconds: 7,
          message: expect.stringContaining('are held for 7 s') as unknown,
        },
      });
    });

    it('a timed-out call says the outcome is unknown', async () => {
      const { service } = setup({ upstream: timeOut });
      const outcome = await service.send(scope, text());
      expect(outcome).toMatchObject({
        outcome: 'rejected',
        reason: { kind: 'upstream_unavailable', message: expect.stringContaining('the outcome is unknown') as unknown },
      });
    });

    it('over the number’s pace: failed with the reason, Meta not called', async () => {
      const { service, seen } = setup({ pace: { ok: false, retryAfterMs: 1500, held: false } });
      const outcome = await service.send(scope, text());
      expect(seen.upstream).toEqual([]);
      expect(outcome).toMatchObject({
        outcome: 'rejected',
        reason: { kind: 'too_many_attempts', retryAfterSeconds: 2 },
        message: { status: 'failed', errorCategory: 'throughput' },
      });
    });

    it('the pacer unreachable: sent unpaced rather than refused', async () => {
      const { service } = setup({ pace: 'unavailable' });
      expect(kindOf(await service.send(scope, text()))).toBe('accepted');
    });

    it('refused by the pre-send checks: thrown, nothing stored, no send metric', async () => {
      const { service, store, seen } = setup({
        refusal: InvalidInput.of('to', 'the customer service window is closed'),
      });
      await expect(service.send(scope, text(), 'k-1')).rejects.toThrow(InvalidInput);
      expect([store.messages.size, store.keys.size, seen.upstream.length, seen.labels.length]).toEqual([0, 0, 0, 0]);
    });

    it('an internal error: the attempt is failed (retryable), the error thrown, the key released', async () => {
      const { service, store } = setup({ upstream: () => Promise.reject(new Error('bug')) });
      await expect(service.send(scope, text(), 'k-1')).rejects.toThrow('bug');
      expect([...store.messages.values()]).toMatchObject([{ status: 'failed', errorCategory: 'retryable' }]);
      expect(store.keys.size).toBe(0);
    });
  });

  describe('Idempotency-Key held by another request', () => {
    it('in flight with the same body: Conflict, nothing stored or sent', async () => {
      const { service, store, seen } = setup();
      store.holdKey('key-1', 'k-1', IdempotencyService.fingerprint(text()), new Date(Date.now() + 60_000));
      await expect(service.send(scope, text(), 'k-1')).rejects.toThrow(Conflict);
      expect([store.messages.size, seen.upstream.length]).toEqual([0, 0]);
    });

    it('in flight with another body: refused on Idempotency-Key', async () => {
      const { service, store } = setup();
      store.holdKey('key-1', 'k-1', 'another-hash', new Date(Date.now() + 60_000));
      await expect(service.send(scope, text(), 'k-1')).rejects.toThrow(InvalidInput);
    });

    it('abandoned by a crashed request (its lock ran out): taken over and sent', async () => {
      const { service, store } = setup();
      store.holdKey('key-1', 'k-1', IdempotencyService.fingerprint(text()), new Date(Date.now() - 1));
      expect(kindOf(await service.send(scope, text(), 'k-1'))).toBe('accepted');
      expect(store.keys.get(`key-1\u0000k-1`)?.state).toBe('completed');
    });

    it('a refusal by the checks gives way to the earlier outcome of the same body (replayed)', async () => {
      const first = setup();
      const accepted = await first.service.send(scope, text(), 'k-1');
      // The window closed since: the checks refuse, but the key's first answer stands.
      const later = setup({ refusal: InvalidInput.of('to', 'the customer service window is closed') });
      later.store.keys.set(`key-1\u0000k-1`, first.store.keys.get(`key-1\u0000k-1`)!);
      expect(await later.service.send(scope, text(), 'k-1')).toEqual({ outcome: 'replayed', earlier: accepted });
    });
  });

  describe('a status webhook that arrives before the send’s own answer (late acceptance)', () => {
    it.each([undefined, 'k-1'])(
      'accepted upstream: the webhook’s status stands, the wamid filled in (key %s)',
      async (key) => {
        const { service, store } = setup({ upstream: statusFirst(accept) });
        const outcome = await service.send(scope, text(), key);
        expect(outcome).toMatchObject({
          outcome: 'accepted',
          message: { status: 'delivered', upstreamMessageId: 'wamid.OK' },
        });
        expect(outcome.outcome === 'accepted' && outcome.message.acceptedAt).toBeInstanceOf(Date);
        if (key) {
          expect(store.keys.get(`key-1\u0000${key}`)?.state).toBe('completed');
          expect(await service.send(scope, text(), key)).toEqual({ outcome: 'replayed', earlier: outcome });
        }
      },
    );

    it.each([undefined, 'k-1'])('the call timed out meanwhile: accepted, not failed (key %s)', async (key) => {
      const { service, store, seen } = setup({ upstream: statusFirst(timeOut) });
      const outcome = await service.send(scope, text(), key);
      expect(outcome).toMatchObject({ outcome: 'accepted', message: { status: 'delivered' } });
      expect(seen.labels).toEqual(['accepted']);
      if (key) expect(await service.send(scope, text(), key)).toEqual({ outcome: 'replayed', earlier: outcome });
      expect(store.messages.size).toBe(1);
    });
  });
});
