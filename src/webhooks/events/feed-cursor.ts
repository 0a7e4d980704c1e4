import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../core/config/app-config.js';

/** A position in an account's feed: after the event (xid, id); (0, 0) is before everything. */
export interface FeedPosition {
  xid: bigint;
  id: number;
}

export const FEED_START: FeedPosition = { xid: 0n, id: 0 };
/** The `after` that starts at the present (the events still to come), rather than at the oldest event (`0`). */
export const FEED_NOW = 'now';

const VERSION = 'v1';
const MAC_BYTES = 16;
const POSITION = /^v1:(0|[1-9]\d{0,19}):(0|[1-9]\d{0,9})$/;

/**
 * Cursors of the events feed: base64url("v1:<xid>:<id>") "." base64url(HMAC-SHA256(key, wabaId + position)),
 * truncated to 128 bits. The MAC covers the business account, so a cursor minted for one account is refused
 * for another, and nobody without the server's key can forge a position. The key is derived from
 * ENCRYPTION_KEY (HKDF, its own label), so there is no extra secret to configure; rotating that key
 * invalidates outstanding cursors (pollers start again from a cursor they keep, or from 0). Positions never
 * expire: xid8 does not wrap, and a position past deleted rows still orders correctly.
 */
@Injectable()
export class FeedCursorCodec {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = Buffer.from(hkdfSync('sha256', config.encryptionKey, Buffer.alloc(0), 'events-feed-cursor', 32));
  }

  encode(wabaId: string, p: FeedPosition): string {
    const position = `${VERSION}:${p.xid}:${p.id}`;
    return `${Buffer.from(position).toString('base64url')}.${this.mac(wabaId, position).toString('base64url')}`;
  }

  /** The position, or undefined for anything malformed, forged or minted for another account. `0` is the start. */
  decode(wabaId: string, cursor: string): FeedPosition | undefined {
    if (cursor === '0') return FEED_START;
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) return undefined;
    const position = Buffer.from(body, 'base64url').toString('latin1');
    const match = POSITION.exec(position);
    const given = Buffer.from(mac, 'base64url');
    if (!match || Buffer.from(position, 'latin1').toString('base64url') !== body || given.length !== MAC_BYTES || !timingSafeEqual(given, this.mac(wabaId, position))) return undefined;
    return { xid: BigInt(match[1]!), id: Number(match[2]) };
  }

  private mac(wabaId: string, position: string): Buffer {
    return createHmac('sha256', this.key).update(wabaId).update('\0').update(position).digest().subarray(0, MAC_BYTES);
  }
}
