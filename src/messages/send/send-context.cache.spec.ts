import { UNRESTRICTED_ACCOUNT } from '../../accounts/health/account-health.js';
import type { ChannelSubscriber, PgListener } from '../../core/db/pg-listener.js';
import { InvalidInput } from '../../core/errors/domain-errors.js';
import type { SendMessageDto } from '../dto/send-message.dto.js';
import { PreSendChecks } from './pre-send-checks.js';
import { SendContextCache } from './send-context.cache.js';
import type { SendContext, SendContextQuery, SendContextReader } from './send-context.reader.js';

const approved = (status = 'APPROVED', lastInboundAt: Date | null = null): SendContext => ({
  account: UNRESTRICTED_ACCOUNT,
  numberExists: true,
  numberStatus: 'CONNECTED',
  numberRemovedAt: null,
  numberThroughputLevel: 'STANDARD',
  templateExists: true,
  templateStatus: status,
  templateRemovedAt: null,
  parameterCounts: { header: 0, body: 0, buttons: {} },
  parameterFormat: 'POSITIONAL',
  templateCategory: 'UTILITY',
  templateOtpType: null,
  recipient: { blocked: false, marketing: null },
  lastInboundAt,
});
const template: SendContextQuery = {
  phoneNumberId: '402',
  templateName: 'hello_world',
  templateLanguage: 'en_US',
  recipient: '447700900001',
  window: false,
};
const text = (to: string): SendContextQuery => ({
  phoneNumberId: '402',
  templateName: null,
  templateLanguage: null,
  recipient: to,
  window: true,
});

function setup() {
  let subscriber: ChannelSubscriber | undefined;
  const reads: Array<{ account: string; resolve: (c: SendContext) => void }> = [];
  /** What the reader was asked: the whole context, or only a recipient's part (`recipient`). */
  const asked: string[] = [];
  // One pending read per get(): the parts and the recipient's part resolve together from the same SendContext.
  let current: Promise<SendContext> | undefined;
  const next = (account: string) =>
    (current ??= new Promise<SendContext>((resolve) => reads.push({ account, resolve })).finally(
      () => (current = undefined),
    ));
  const repository = {
    readParts: (account: string) => {
      asked.push('parts');
      return next(account);
    },
    readRecipient: async (account: string, _q: SendContextQuery, opts: { marketing: boolean }) => {
      asked.push(opts.marketing ? 'recipient+marketing' : 'recipient');
      const c = await next(account);
      return { recipient: c.recipient, lastInboundAt: c.lastInboundAt };
    },
  } as unknown as SendContextReader;
  const listener = { subscribe: (_: string, s: ChannelSubscriber) => (subscriber = s) } as unknown as PgListener;
  const cache = new SendContextCache(repository, listener);
  cache.onModuleInit();
  subscriber!.listening(true);
  /** Resolves the next pending read with `value` and returns what get() answered. */
  const get = async (account: string, q: SendContextQuery, value: SendContext) => {
    const pending = cache.get(account, q);
    await Promise.resolve();
    reads.shift()?.resolve(value);
    return pending;
  };
  return { cache, reads, asked, subscriber: subscriber!, get };
}

describe('SendContextCache', () => {
  it('answers from memory until the business account is notified, per account', async () => {
    const { cache, reads, subscriber, get } = setup();
    await get('acc-a', template, approved());
    await get('acc-b', template, approved());
    expect((await cache.get('acc-a', template)).templateStatus).toBe('APPROVED');
    expect(reads).toHaveLength(0);
    subscriber.notify('acc-a');
    expect((await get('acc-a', template, approved('PAUSED'))).templateStatus).toBe('PAUSED');
    expect((await cache.get('acc-b', template)).templateStatus).toBe('APPROVED'); // B untouched, still cached
    expect(reads).toHaveLength(0);
  });

  it('does not cache a read that was in flight when a change was notified', async () => {
    const { cache, reads, subscriber } = setup();
    const stale = cache.get('acc-a', template);
    await Promise.resolve();
    subscriber.notify('acc-a'); // committed while the read ran: its answer may predate the change
    reads.shift()!.resolve(approved('APPROVED'));
    expect((await stale).templateStatus).toBe('APPROVED');
    const next = cache.get('acc-a', template);
    expect(reads).toHaveLength(1); // read again, not answered from the stale value
    reads.shift()!.resolve(approved('PAUSED'));
    expect((await next).templateStatus).toBe('PAUSED');
  });

  it('caches nothing while not listening', async () => {
    const { cache, reads, subscriber, get } = setup();
    subscriber.listening(false);
    await get('acc-a', template, approved());
    void cache.get('acc-a', template);
    expect(reads).toHaveLength(1);
  });

  it('reads only the recipient’s part for a new recipient of a cached template, and the marketing preference only for MARKETING templates', async () => {
    const { cache, reads, asked, get } = setup();
    await get('acc-a', template, approved());
    expect(asked.splice(0)).toEqual(['parts', 'recipient+marketing']); // category unknown yet: read with the preference
    const other = { ...template, recipient: '447700900002' };
    expect(
      (await get('acc-a', other, { ...approved(), recipient: { blocked: true, marketing: null } })).recipient.blocked,
    ).toBe(true);
    expect(asked.splice(0)).toEqual(['recipient']); // UTILITY: no preference read
    expect((await cache.get('acc-a', other)).recipient.blocked).toBe(true); // cached until notified
    expect(reads).toHaveLength(0);
    const marketing = { ...template, templateName: 'weekly_deals' };
    await get('acc-a', marketing, { ...approved(), templateCategory: 'MARKETING' });
    await get(
      'acc-a',
      { ...marketing, recipient: '447700900003' },
      { ...approved(), templateCategory: 'MARKETING', recipient: { blocked: false, marketing: 'stop' } },
    );
    expect(asked.splice(0)).toEqual(['parts', 'recipient+marketing', 'recipient+marketing']);
    expect((await cache.get('acc-a', { ...marketing, recipient: '447700900003' })).recipient.marketing).toBe('stop');
  });

  it('keeps open windows only, until they close', async () => {
    const { cache, reads, get } = setup();
    await get('acc-a', text('4477'), approved('APPROVED', null)); // closed: not kept
    void cache.get('acc-a', text('4477'));
    expect(reads).toHaveLength(1);
    reads.shift()!.resolve(approved('APPROVED', new Date()));
    await Promise.resolve();
    await get('acc-a', text('4478'), approved('APPROVED', new Date(Date.now() - 25 * 3600_000))); // expired window
    void cache.get('acc-a', text('4478'));
    expect(reads).toHaveLength(1);
    reads.shift()!.resolve(approved('APPROVED', null));
    await new Promise((r) => setImmediate(r));
    expect((await cache.get('acc-a', text('4477'))).lastInboundAt).toBeInstanceOf(Date); // open: kept
    expect(reads).toHaveLength(0);
  });
});

describe('PreSendChecks: refusals are made on the database, not on the cache', () => {
  const context = (blocked: boolean): SendContext => ({ ...approved(), recipient: { blocked, marketing: null } });

  it('sends to a user unblocked a moment ago whose notification has not reached this process, and keeps refusing a blocked one', async () => {
    // The database as the reader sees it; the cache hears of changes only through notifications (none here).
    let blocked = true;
    let reads = 0;
    const reader = {
      readParts: async () => {
        reads++;
        return context(blocked);
      },
      readRecipient: async () => {
        reads++;
        return { recipient: { blocked, marketing: null }, lastInboundAt: null };
      },
      languagesOf: async () => [],
    } as unknown as SendContextReader;
    let subscriber: ChannelSubscriber | undefined;
    const listener = { subscribe: (_: string, s: ChannelSubscriber) => (subscriber = s) } as unknown as PgListener;
    const cache = new SendContextCache(reader, listener);
    cache.onModuleInit();
    subscriber!.listening(true);
    const checks = new PreSendChecks(cache, reader);
    const dto = {
      type: 'template',
      phoneNumberId: '402',
      to: '447700900001',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
    } as SendMessageDto;

    await expect(checks.assertSendable('acc-a', dto)).rejects.toMatchObject({
      fields: [{ field: 'to', message: expect.stringMatching(/^to is blocked on phone number 402/) }],
    });
    await expect(checks.assertSendable('acc-a', dto)).rejects.toBeInstanceOf(InvalidInput); // still blocked
    blocked = false; // unblocked and committed; no notification yet
    await expect(checks.assertSendable('acc-a', dto)).resolves.toEqual({
      upstreamApi: 'cloud_api',
      throughputLevel: 'STANDARD',
    });
    const before = reads;
    await checks.assertSendable('acc-a', dto); // what the database said is cached: no read for the next send
    expect(reads).toBe(before);
  });
});
