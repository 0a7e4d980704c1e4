import type { AppConfig } from '../../core/config/app-config.js';
import { inboundMediaOf, InboundMediaLinks } from './inbound-media-links.js';

describe('InboundMediaLinks', () => {
  const config = (keys = [1], base = 'https://api.example.com') =>
    ({
      encryptionKeys: keys.map((k) => ({ id: `k${k}`, key: Buffer.alloc(32, k) })),
      mediaLinkTtlSeconds: 300,
      publicBaseUrl: base,
    }) as unknown as AppConfig;
  const target = { businessAccountId: '0b6f1f2e-6f0a-4c57-9d0e-5b2f8f6a1c01', messageId: 2 ** 31 + 9 };
  const now = Date.parse('2026-11-26T10:00:00.000Z');
  const tokenOf = (url: string) => url.split('/').at(-1)!;

  it('signs a link on this service, bound to the message and account, valid for the TTL and not after', () => {
    const links = new InboundMediaLinks(config());
    const { url, expiresAt } = links.sign(target, now);
    expect(url).toMatch(/^https:\/\/api\.example\.com\/media\/inbound\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(expiresAt.toISOString()).toBe('2026-11-26T10:05:00.000Z');
    expect(links.verify(tokenOf(url), now + 299_000)).toEqual({ ok: true, target });
    expect(links.verify(tokenOf(url), now + 300_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses an altered message id, account or expiry, a forged MAC, another server key, and junk', () => {
    const links = new InboundMediaLinks(config());
    const token = tokenOf(links.sign(target, now).url);
    const [body, mac] = token.split('.') as [string, string];
    const payload = Buffer.from(body, 'base64url').toString();
    const swap = (from: string, to: string) => `${Buffer.from(payload.replace(from, to)).toString('base64url')}.${mac}`;
    const forged = [
      swap(String(target.messageId), String(target.messageId + 1)),
      swap(target.businessAccountId, '0b6f1f2e-6f0a-4c57-9d0e-5b2f8f6a1c02'),
      swap(payload.split(':').at(-1)!, String(Number(payload.split(':').at(-1)) + 3600)),
      `${body}.${Buffer.alloc(16).toString('base64url')}`,
      `${body}`,
      `${token}.x`,
      '',
      'not-a-token',
    ];
    for (const bad of forged)
      expect({ bad, check: links.verify(bad, now) }).toEqual({ bad, check: { ok: false, reason: 'invalid' } });
    expect(new InboundMediaLinks(config([2])).verify(token, now)).toEqual({ ok: false, reason: 'invalid' });
    // A rotated ring still accepts links made with an older key.
    expect(new InboundMediaLinks(config([2, 1])).verify(token, now).ok).toBe(true);
  });

  it('gives a path when no PUBLIC_BASE_URL is configured', () => {
    expect(new InboundMediaLinks(config([1], '')).sign(target, now).url).toMatch(/^\/media\/inbound\//);
  });

  it("describes an inbound media message's media with a fresh link; nothing for outbound or non-media messages", () => {
    const links = new InboundMediaLinks(config());
    const image = {
      id: target.messageId,
      businessAccountId: target.businessAccountId,
      direction: 'inbound',
      type: 'image',
      content: { image: { id: '1234', mime_type: 'image/png', sha256: 'abc', caption: 'Box' } },
    };
    expect(links.forMessage(image, now)).toEqual({
      mimeType: 'image/png',
      size: null,
      sha256: 'abc',
      caption: 'Box',
      filename: null,
      url: expect.stringContaining('/media/inbound/'),
      expiresAt: '2026-11-26T10:05:00.000Z',
    });
    expect(links.forMessage({ ...image, direction: 'outbound' }, now)).toBeNull();
    expect(links.forMessage({ ...image, type: 'text', content: { text: { body: 'hi' } } }, now)).toBeNull();
    expect(
      inboundMediaOf({
        direction: 'inbound',
        type: 'document',
        content: { document: { id: '9', filename: 'a.pdf', mime_type: 'application/pdf' } },
      }),
    ).toMatchObject({ id: '9', filename: 'a.pdf' });
    expect(inboundMediaOf({ direction: 'inbound', type: 'image', content: { image: {} } })).toBeNull();
  });
});
