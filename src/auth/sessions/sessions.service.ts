import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { randomToken, sha256Hex } from '../../core/crypto/tokens.js';
import type { ConsoleScope } from '../request-scope.js';
import type { OperatorRole } from '../roles.js';
import { SessionsRepository } from './sessions.repository.js';

/** lastSeenAt is refreshed at most this often, so a busy console does not write on every request. */
const TOUCH_INTERVAL_MS = 60_000;

export interface IssuedSession {
  token: string;
  expiresAt: Date;
}

/**
 * Console sessions: 32 random bytes handed to the browser once, only their SHA-256 stored. A session ends
 * at its absolute expiry, after the idle lifetime without use, or when revoked (logout).
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly config: AppConfig,
  ) {}

  async issue(operatorId: string): Promise<IssuedSession> {
    const token = randomToken(32);
    const now = Date.now();
    const expiresAt = new Date(now + this.config.sessionAbsoluteTtlSeconds * 1000);
    await this.sessions.create(operatorId, { tokenHash: sha256Hex(token), expiresAt, lastSeenAt: new Date(now) });
    return { token, expiresAt: this.effectiveExpiry(new Date(now), expiresAt) };
  }

  /** The operator behind a live session token, or null. */
  async authenticate(token: string): Promise<ConsoleScope | null> {
    return (await this.authenticateSliding(token))?.scope ?? null;
  }

  /**
   * As `authenticate`, and when the use moved the idle deadline (at most once a minute), how long the cookie
   * may now live: the browser's copy slides with the server's, never past the absolute expiry.
   */
  async authenticateSliding(token: string): Promise<{ scope: ConsoleScope; renewedForSeconds?: number } | null> {
    const session = await this.sessions.findByTokenHash(sha256Hex(token));
    const now = Date.now();
    // A removed operator's sessions are revoked with its removal; its row is checked too, in case one was in flight.
    if (!session || session.revokedAt || session.operator.removedAt || session.expiresAt.getTime() <= now) return null;
    if (session.lastSeenAt.getTime() + this.config.sessionIdleTtlSeconds * 1000 <= now) return null;
    let renewedForSeconds: number | undefined;
    if (now - session.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) {
      await this.sessions.touch(session.id, new Date(now));
      renewedForSeconds = Math.floor((this.effectiveExpiry(new Date(now), session.expiresAt).getTime() - now) / 1000);
    }
    const scope = {
      sessionId: session.id,
      operatorId: session.operator.id,
      organizationId: session.operator.organizationId,
      email: session.operator.email,
      role: session.operator.role as OperatorRole,
      platformAdmin: session.operator.platformAdmin,
    };
    return { scope, renewedForSeconds };
  }

  /** Ends every session of the operator at once (but `except`, the caller's own, when given); how many ended. */
  revokeAllOf(operatorId: string, except?: string): Promise<number> {
    return this.sessions.revokeAllOf(operatorId, new Date(), except);
  }

  async revoke(sessionId: string): Promise<void> {
    await this.sessions.revoke(sessionId, new Date());
  }

  async expiryOf(sessionId: string): Promise<Date | null> {
    const session = await this.sessions.findById(sessionId);
    return session ? this.effectiveExpiry(session.lastSeenAt, session.expiresAt) : null;
  }

  /** The earlier of the idle deadline and the absolute one. */
  private effectiveExpiry(lastSeenAt: Date, expiresAt: Date): Date {
    const idle = lastSeenAt.getTime() + this.config.sessionIdleTtlSeconds * 1000;
    return new Date(Math.min(idle, expiresAt.getTime()));
  }
}
