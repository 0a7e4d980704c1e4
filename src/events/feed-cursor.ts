import { Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../core/config/app-config.js';

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
/** xid8: up to 20 digits; the event id: a safe integer (at most 16 digits, checked again after parsing). */
const POSITION = /^v1:(0|[1-9]\d{0,19}):(0|[1-9]\d{0,15})$/;

/**
 * Cursors of the events feed: base64url("v1:<xid>:<id>") "." base64url(HMAC-SHA256(key, wabaId + position)),
 * truncated to 128 bits. The MAC covers the business account, so a cursor minted for one account is refused
 * for another, and nobody without the server's key can forge a position. The MAC keys are derived from the
 * encryption key ring (HKDF, their own label), so there is no extra secret to configure: new cursors use the
 * newest key, a cursor made with any key still in the ring is accepted (rotation keeps outstanding cursors
 * valid until their key is retired). Positions never expire: xid8 does not wrap, and a position past
 * deleted rows still orders correctly.
 */
export class HmacFeedCursors {
  /** Newest first, as the ring. */
  private readonly keys: Buffer[];

  /** `label` separates the feeds: a cursor of one feed (events, messages) is refused by another. */
  constructor(config: AppConfig, label: string) {
    this.keys = config.encryptionKeys.map((k) => Buffer.from(hkdfSync('sha256', k.key, Buffer.alloc(0), label, 32)));
  }

  encode(wabaId: string, p: FeedPosition): string {
    const position = `${VERSION}:${p.xid}:${p.id}`;
    return `${Buffer.from(position).toString('base64url')}.${this.mac(this.keys[0]!, wabaId, position).toString('base64url')}`;
  }

  /** The position, or undefined for anything malformed, forged or minted for another account. `0` is the start. */
  decode(wabaId: string, cursor: string): FeedPosition | undefined {
    if (cursor === '0') return FEED_START;
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) return undefined;
    const position = Buffer.from(body, 'base64url').toString('latin1');
    const match = POSITION.exec(position);
    const given = Buffer.from(mac, 'base64url');
    if (!match || Buffer.from(position, 'latin1').toString('base64url') !== body || given.length !== MAC_BYTES)
      return undefined;
    if (!this.keys.some((key) => timingSafeEqual(given, this.mac(key, wabaId, position)))) return undefined;
    const id = Number(match[2]);
    return Number.isSafeInteger(id) ? { xid: BigInt(match[1]!), id } : undefined;
  }

  private mac(key: Buffer, wabaId: string, position: string): Buffer {
    return createHmac('sha256', key).update(wabaId).update('\0').update(position).digest().subarray(0, MAC_BYTES);
  }
}

/** Cursors of the events feed (GET /webhooks/events?after=…). */
@Injectable()
export class FeedCursorCodec extends HmacFeedCursors {
  constructor(config: AppConfig) {
    super(config, 'events-feed-cursor');
  }
}
