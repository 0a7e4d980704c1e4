import { PassThrough } from 'node:stream';
import type { AppConfig } from '../../core/config/app-config.js';
import { Gone, NotFound, TooManyAttempts } from '../../core/errors/domain-errors.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import type { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import type { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import type { AccountCredentials } from '../../accounts/business-accounts/account-credentials.js';
import type { MessagesRepository } from '../messages.repository.js';
import { InboundMediaDownloads } from './inbound-media-downloads.js';
import { InboundMediaLinks } from './inbound-media-links.js';

describe('InboundMediaDownloads', () => {
  const config = {
    encryptionKeys: [{ id: 'k1', key: Buffer.alloc(32, 1) }],
    mediaLinkTtlSeconds: 300,
    publicBaseUrl: '',
    mediaDownloadsPerAccount: 2,
  } as unknown as AppConfig;
  const account = '0b6f1f2e-6f0a-4c57-9d0e-5b2f8f6a1c01';
  const message = {
    id: 7,
    businessAccountId: account,
    direction: 'inbound',
    type: 'image',
    content: { image: { id: '555', mime_type: 'image/png' } },
  };

  function setUp(
    getMedia: () => Promise<{ url: string }> = () => Promise.resolve({ url: 'https://lookaside.fbsbx.com/x' }),
  ) {
    const links = new InboundMediaLinks(config);
    const streams: PassThrough[] = [];
    const messages = {
      findOne: (id: string, messageId: number) => Promise.resolve(id === account && messageId === 7 ? message : null),
    } as unknown as MessagesRepository;
    const accounts = {
      findCredential: () => Promise.resolve({ wabaId: '1', accessTokenEncrypted: 'x' }),
    } as unknown as BusinessAccountsRepository;
    const credentials = { open: () => 'token' } as unknown as AccountCredentials;
    const upstream = {
      getMedia,
      downloadMedia: () => {
        const stream = new PassThrough();
        streams.push(stream);
        return Promise.resolve({ stream, contentType: 'application/octet-stream', contentLength: 3 });
      },
    } as unknown as WhatsAppClient;
    const downloads = new InboundMediaDownloads(links, messages, accounts, credentials, upstream, config);
    const token = (messageId = 7, now = Date.now()) =>
      links.sign({ businessAccountId: account, messageId }, now).url.split('/').at(-1)!;
    return { downloads, token, streams };
  }

  it("opens the message's media with the stored mime type, and holds one of the account's slots until the file ends", async () => {
    const { downloads, token } = setUp();
    const a = await downloads.open(token());
    expect(a.contentType).toBe('image/png');
    const b = await downloads.open(token());
    await expect(downloads.open(token())).rejects.toBeInstanceOf(TooManyAttempts);
    a.done();
    const c = await downloads.open(token());
    b.stream.destroy();
    await new Promise((r) => setImmediate(r));
    await expect(downloads.open(token())).resolves.toBeDefined();
    c.done();
  });

  it('refuses forged (404) and expired (410) links before any lookup, and a link to a message that is not inbound media (404)', async () => {
    const { downloads, token } = setUp();
    await expect(downloads.open(`${token()}x`)).rejects.toBeInstanceOf(NotFound);
    await expect(downloads.open(token(7, Date.now() - 3_600_000))).rejects.toBeInstanceOf(Gone);
    await expect(downloads.open(token(8))).rejects.toThrow('Media link not found');
  });

  it('names the media when the upstream no longer has it, passes other upstream failures on, and frees the slot either way', async () => {
    const gone = setUp(() =>
      Promise.reject(
        new UpstreamError({
          operation: 'getMedia',
          title: 'Object does not exist',
          errorClass: 'permanent',
          code: 100,
          httpStatus: 400,
        }),
      ),
    );
    await expect(gone.downloads.open(gone.token())).rejects.toThrow(
      'Media 555 of message 7 is no longer available from the upstream platform',
    );
    const down = setUp(() =>
      Promise.reject(
        new UpstreamError({
          operation: 'getMedia',
          title: 'Service unavailable',
          errorClass: 'retryable',
          httpStatus: 503,
        }),
      ),
    );
    for (let i = 0; i < 3; i++) await expect(down.downloads.open(down.token())).rejects.toBeInstanceOf(UpstreamError);
  });
});
