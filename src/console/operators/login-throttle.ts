import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppConfig } from '../../core/config/app-config.js';
import { TemporarilyUnavailable, TooManyAttempts } from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import { AttemptBudget } from '../../core/redis/attempt-budget.js';
import { groupedKey } from '../../core/redis/redis-keys.js';

export const TOO_MANY_LOGINS = 'Too many failed login attempts; try again later';
export const THROTTLE_UNAVAILABLE_RETRY_SECONDS = 5;

/** What the throttle uses of the budgets (Redis) and of the configuration (the service tier's stand-ins implement these). */
export type ThrottleBudget = Pick<AttemptBudget, 'take' | 'giveBack' | 'isMarked' | 'mark'>;
export type ThrottleConfig = Pick<
  AppConfig,
  | 'queuePrefix'
  | 'redisCluster'
  | 'loginMaxFailures'
  | 'loginEmailMaxFailures'
  | 'loginAddressMaxFailures'
  | 'loginKnownAddressTtlSeconds'
  | 'loginWindowSeconds'
>;

/** A login attempt that was allowed to verify a password; settle it with `succeeded` or leave it counted. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

/**
 * Login throttle, across API processes. Every attempt takes one unit from three fixed-window budgets BEFORE
 * the password is verified (one atomic Redis call), so however many requests arrive at once, at most the
 * budget's worth are verified; the rest get 429 + Retry-After without touching scrypt:
 *
 * - (email, address): LOGIN_MAX_FAILURES. Guessing from one address stops here, and only this pair locks.
 * - email, from every address: LOGIN_EMAIL_MAX_FAILURES (4× by default), the global cap on guesses at one
 *   account. One address can spend at most its pair budget of it, so an attacker's failures from one address
 *   do not lock the owner out from another; it takes several addresses to spend it.
 * - address, over every email: LOGIN_ADDRESS_MAX_FAILURES (credential stuffing from one address).
 *
 * A successful login gives its own unit back to all three, so only failures (and attempts still in flight)
 * count; failures are never forgiven early (not even by a success), so no request can reopen a spent budget.
 *
 * Known addresses (audit 2, finding 7): an address an operator signed in from successfully within
 * LOGIN_KNOWN_ADDRESS_TTL_SECONDS (30 days; each success renews it) is exempt from the per-email budget, so
 * attackers spending it from four or more addresses no longer lock the operator out of the addresses it uses;
 * the (email, address) and address budgets still apply there. A new address still meets the per-email cap.
 * If Redis is unreachable the throttle fails closed (503 + Retry-After): an uncounted attempt is exactly
 * what this class exists to prevent. Console logins pause during a Redis outage; the message API does not.
 */
@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(AttemptBudget) private readonly budget: ThrottleBudget,
    @Inject(AppConfig) private readonly config: ThrottleConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  /** Counts the attempt, or throws TooManyAttempts when one of its budgets is spent. */
  async begin(email: string, address: string): Promise<LoginAttempt> {
    // The three budgets are taken in one script: on a Redis Cluster they share the hash tag {login} (one slot; logins
    // are few). The known-address mark is read and written on its own.
    const key = (name: string) => groupedKey(this.config, 'login', `login:${name}`);
    const knownKey = `${this.config.queuePrefix}:login:known:${address}:${email}`;
    const pair = { key: key(`pair:${address}:${email}`), limit: this.config.loginMaxFailures };
    const perEmail = { key: key(`email:${email}`), limit: this.config.loginEmailMaxFailures };
    const perAddress = { key: key(`ip:${address}`), limit: this.config.loginAddressMaxFailures };
    let result;
    let budgets;
    try {
      const known = this.config.loginKnownAddressTtlSeconds > 0 && (await this.budget.isMarked(knownKey));
      budgets = known ? [pair, perAddress] : [pair, perEmail, perAddress];
      result = await this.budget.take(budgets, this.config.loginWindowSeconds);
    } catch (error) {
      this.logger.warn({ err: error }, 'login throttle unavailable; refusing the login');
      throw new TemporarilyUnavailable(
        'Login is temporarily unavailable; try again shortly',
        THROTTLE_UNAVAILABLE_RETRY_SECONDS,
      );
    }
    if (!result.taken) throw new TooManyAttempts(TOO_MANY_LOGINS, result.retryAfterSeconds);
    return {
      succeeded: async () => {
        const ttl = this.config.loginKnownAddressTtlSeconds;
        await Promise.all([
          this.budget.giveBack(budgets.map((b) => b.key)),
          ttl > 0 ? this.budget.mark(knownKey, ttl) : undefined,
        ]).catch((error: unknown) =>
          this.logger.warn({ err: error }, 'login throttle unavailable; a successful login stays counted'),
        );
      },
    };
  }
}
