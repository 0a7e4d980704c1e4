import { UNRESTRICTED_ACCOUNT } from '../../accounts/health/account-health.js';
import type { ChannelSubscriber, PgListener } from '../../core/db/pg-listener.js';
import { InvalidInput } from '../../core/errors/domain-errors.js';
import type { SendMessageDto } from '../dto/send-message.dto.js';
import { parameterProblems, PreSendChecks } from './pre-send-checks.js';
import { SendContextCache } from './send-context.cache.js';
import type { SendContext, SendContextReader } from './send-context.reader.js';

const counts = { header: 1, body: 2, buttons: { '0': 1 }, names: { header: ['1'], body: ['1', '2'] } };
const text = (t: string, parameter_name?: string) => ({ type: 'text', text: t, parameter_name });

describe('parameterProblems', () => {
  it('accepts components that match the synced template', () => {
    expect(
      parameterProblems(counts, 'POSITIONAL', [
        { type: 'header', parameters: [text('ORD-1')] },
        { type: 'body', parameters: [text('Priya'), text('ORD-1')] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [text('ORD-1')] },
      ]),
    ).toEqual([]);
  });

  it('names every mismatch in one components error', () => {
    const problems = parameterProblems(counts, 'POSITIONAL', [{ type: 'body', parameters: [text('Priya')] }]);
    expect(problems).toEqual([
      {
        field: 'components',
        message:
          'header expects 1 parameter, got 0; body expects 2 parameters, got 1; button 0 expects 1 parameter, got 0',
      },
    ]);
  });

  it('requires the placeholder names of a NAMED template', () => {
    const named = { header: 0, body: 1, buttons: {}, names: { header: [], body: ['first_name'] } };
    expect(parameterProblems(named, 'NAMED', [{ type: 'body', parameters: [text('Priya', 'first_name')] }])).toEqual(
      [],
    );
    expect(parameterProblems(named, 'NAMED', [{ type: 'body', parameters: [text('Priya', 'name')] }])).toEqual([
      { field: 'components', message: 'body needs parameter_name first_name' },
    ]);
  });
});

describe('PreSendChecks: refusals are made on the database, not on the cache', () => {
  const context = (blocked: boolean): SendContext => ({
    account: UNRESTRICTED_ACCOUNT,
    numberExists: true,
    numberStatus: 'CONNECTED',
    numberRemovedAt: null,
    numberThroughputLevel: 'STANDARD',
    templateExists: true,
    templateStatus: 'APPROVED',
    templateRemovedAt: null,
    parameterCounts: { header: 0, body: 0, buttons: {}, names: { header: [], body: [] } },
    parameterFormat: 'POSITIONAL',
    templateCategory: 'UTILITY',
    templateOtpType: null,
    recipient: { blocked, marketing: null },
    lastInboundAt: null,
  });

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
