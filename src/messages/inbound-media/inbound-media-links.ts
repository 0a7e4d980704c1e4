import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../core/config/app-config.js';
import type { InboundMediaView } from '../message.view.js';

/** The route that serves a link's bytes (no key headers: the link is the credential). */
export const INBOUND_MEDIA_PATH = '/media/inbound';

/** Meta's media object of an inbound message, as stored in its content (`{[type]: {id, mime_type, …}}`). */
export interface InboundMediaRef {
  type: string;
  id: string;
  mimeType: string | null;
  sha256: string | null;
  caption: string | null;
  filename: string | null;
  size: number | null;
}

export const INBOUND_MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;

/** What a verified link names. */
export interface LinkTarget {
  businessAccountId: string;
  messageId: number;
}

export type LinkCheck = { ok: true; target: LinkTarget } | { ok: false; reason: 'invalid' | 'expired' };

const MAC_BYTES = 16;
const PAYLOAD = /^v1:([0-9a-f-]{36}):([1-9]\d{0,15}):([1-9]\d{0,11})$/;

/**
 * Short-lived links to the media of inbound messages: base64url("v1:<businessAccountId>:<messageId>:<expires>")
 * "." base64url(HMAC-SHA256(key, payload)) truncated to 128 bits. The MAC binds the link to that message of that
 * account and to its expiry: nobody without the server's key can make or alter one. Keys are derived from the
 * encryption key ring (HKDF, own label): new links use the newest key, links made with any key in the ring verify.
 * Meta's URL and token are never part of it; the bytes are fetched from Meta when the link is used.
 */
@Injectable()
export class InboundMediaLinks {
  private readonly keys: Buffer[];
  private readonly ttlSeconds: number;
  private readonly base: string;

  constructor(config: AppConfig) {
    this.keys = config.encryptionKeys.map((k) =>
      Buffer.from(hkdfSync('sha256', k.key, Buffer.alloc(0), 'inbound-media-link', 32)),
    );
    this.ttlSeconds = config.mediaLinkTtlSeconds;
    this.base = config.publicBaseUrl;
  }

  /** A link to message `messageId`'s media, valid for MEDIA_LINK_TTL_SECONDS from `now`. */
  sign(target: LinkTarget, now = Date.now()): { url: string; expiresAt: Date } {
    const expires = Math.ceil(now / 1000) + this.ttlSeconds;
    const payload = `v1:${target.businessAccountId}:${target.messageId}:${expires}`;
    const token = `${Buffer.from(payload).toString('base64url')}.${this.mac(this.keys[0]!, payload).toString('base64url')}`;
    return { url: `${this.base}${INBOUND_MEDIA_PATH}/${token}`, expiresAt: new Date(expires * 1000) };
  }

  /** What the token names, or why it is refused: malformed or forged (`invalid`), or past its expiry (`expired`). */
  verify(token: string, now = Date.now()): LinkCheck {
    const [body, mac, extra] = token.split('.');
    if (!body || !mac || extra !== undefined || body.length > 200) return { ok: false, reason: 'invalid' };
    const payload = Buffer.from(body, 'base64url').toString('latin1');
    const match = PAYLOAD.exec(payload);
    const given = Buffer.from(mac, 'base64url');
    if (!match || Buffer.from(payload, 'latin1').toString('base64url') !== body || given.length !== MAC_BYTES)
      return { ok: false, reason: 'invalid' };
    if (!this.keys.some((key) => timingSafeEqual(given, this.mac(key, payload))))
      return { ok: false, reason: 'invalid' };
    if (Number(match[3]) * 1000 <= now) return { ok: false, reason: 'expired' };
    const messageId = Number(match[2]);
    return Number.isSafeInteger(messageId)
      ? { ok: true, target: { businessAccountId: match[1]!, messageId } }
      : { ok: false, reason: 'invalid' };
  }

  /** The `media` of a message view: Meta's description of an inbound message's media and a fresh link; null otherwise. */
  forMessage(
    m: { id: number; businessAccountId: string; direction: string; type: string; content: unknown },
    now = Date.now(),
  ): InboundMediaView | null {
    const ref = inboundMediaOf(m);
    if (!ref) return null;
    const link = this.sign({ businessAccountId: m.businessAccountId, messageId: m.id }, now);
    return {
      mimeType: ref.mimeType,
      size: ref.size,
      sha256: ref.sha256,
      caption: ref.caption,
      filename: ref.filename,
      url: link.url,
      expiresAt: link.expiresAt.toISOString(),
    };
  }

  private mac(key: Buffer, payload: string): Buffer {
    return createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  }
}

/** The media of an inbound message's stored content, or null (not inbound media, or no Meta media id). */
export function inboundMediaOf(m: { direction: string; type: string; content: unknown }): InboundMediaRef | null {
  if (m.direction !== 'inbound' || !(INBOUND_MEDIA_TYPES as readonly string[]).includes(m.type)) return null;
  const content = m.content as Record<string, unknown> | null;
  const media = content?.[m.type] as Record<string, unknown> | undefined;
  if (!media || typeof media.id !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    type: m.type,
    id: media.id,
    mimeType: text(media.mime_type),
    sha256: text(media.sha256),
    caption: text(media.caption),
    filename: text(media.filename),
    size: typeof media.file_size === 'number' ? media.file_size : null,
  };
}
