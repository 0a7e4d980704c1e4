import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { AppConfig } from '../../core/config/app-config.js';
import { digestsEqual, sha256Hex } from '../../core/crypto/tokens.js';
import { Unauthenticated } from '../../core/errors/domain-errors.js';
import { APP_LOGGER } from '../../core/logging/app-logger.js';
import type { ApiKeyScope } from '../request-scope.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { readWindowOf } from '../read-window.js';
import { credentialVersionOf } from './credential-version.js';

export const API_KEY_HEADERS_MISSING = 'API key headers missing';
export const INVALID_API_KEY = 'Invalid API key';

interface KeyRecord {
  scope: ApiKeyScope;
  secretHash: string;
  usable: boolean;
}

interface CacheEntry {
  record: KeyRecord;
  fetchedAt: number;
}

/** lastUsedAt is written in batches this often instead of once per request. */
const LAST_USED_FLUSH_MS = 30_000;
/** Entries of each cache; the negative one drops its oldest entry when full, the positive one starts over. */
const CACHE_MAX_ENTRIES = 10_000;

/**
 * Authenticates an API key pair. Lookups are cached per process for API_KEY_CACHE_TTL_MS (default 1 s):
 * at most one database read per key per second whatever the request rate, and a revocation or a
 * disconnected business account is seen by every API process within that time.
 *
 * Access keys that do not exist are remembered in a separate, bounded negative cache for
 * API_KEY_NEGATIVE_CACHE_TTL_MS (default 30 s): a flood of made-up `ak_` keys costs one query per key per
 * 30 s instead of one per request, and cannot push real keys out of the positive cache. A key created
 * meanwhile cannot be refused by it: access keys are 24 random bytes made at creation, so no one has asked
 * for a new key before it existed (and revoking or creating in this process drops the entry anyway).
 */
@Injectable()
export class ApiKeyAuthenticator implements OnModuleDestroy {
  private readonly cache = new Map<string, CacheEntry>();
  /** Unknown access key → until when it is known to be unknown (ms epoch). Insertion order = age. */
  private readonly unknown = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<KeyRecord | null>>();
  private readonly lastUsed = new Map<string, Date>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.flushTimer = setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS);
    this.flushTimer.unref();
  }

  async authenticate(accessKey: unknown, secretKey: unknown): Promise<ApiKeyScope> {
    if (typeof accessKey !== 'string' || typeof secretKey !== 'string' || !accessKey || !secretKey) {
      throw new Unauthenticated(API_KEY_HEADERS_MISSING);
    }
    if (
      !accessKey.startsWith('ak_') ||
      !secretKey.startsWith('sk_') ||
      accessKey.length > 100 ||
      secretKey.length > 100
    ) {
      throw new Unauthenticated(INVALID_API_KEY);
    }
    const record = await this.lookup(accessKey);
    // Hash and compare even when the key is unknown, so timing does not tell which half was wrong.
    const matches = digestsEqual(sha256Hex(secretKey), record?.secretHash ?? sha256Hex('absent'));
    if (!record || !matches || !record.usable) throw new Unauthenticated(INVALID_API_KEY);
    this.lastUsed.set(record.scope.apiKeyId, new Date());
    return record.scope;
  }

  /** Forget a key at once in this process (revocation by this process); other processes follow within the TTL. */
  invalidate(accessKey: string): void {
    this.cache.delete(accessKey);
    this.unknown.delete(accessKey);
  }

  private async lookup(accessKey: string): Promise<KeyRecord | null> {
    const now = Date.now();
    const cached = this.cache.get(accessKey);
    if (cached && now - cached.fetchedAt < this.config.apiKeyCacheTtlMs) return cached.record;
    const unknownUntil = this.unknown.get(accessKey);
    if (unknownUntil !== undefined) {
      if (now < unknownUntil) return null;
      this.unknown.delete(accessKey);
    }
    let pending = this.inFlight.get(accessKey);
    if (!pending) {
      pending = this.load(accessKey).finally(() => this.inFlight.delete(accessKey));
      this.inFlight.set(accessKey, pending);
    }
    return pending;
  }

  private async load(accessKey: string): Promise<KeyRecord | null> {
    const key = await this.keys.findForAuthentication(accessKey);
    if (!key) {
      this.rememberUnknown(accessKey);
      return null;
    }
    const record: KeyRecord = {
      secretHash: key.secretHash,
      usable: key.revokedAt === null && key.businessAccount.disconnectedAt === null,
      scope: {
        apiKeyId: key.id,
        organizationId: key.organizationId,
        businessAccountId: key.businessAccount.id,
        wabaId: key.businessAccount.wabaId,
        credentialVersion: credentialVersionOf(key.businessAccount.accessTokenEncrypted),
        window: readWindowOf(key.businessAccount),
      },
    };
    if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
    this.cache.set(accessKey, { record, fetchedAt: Date.now() });
    return record;
  }

  private rememberUnknown(accessKey: string): void {
    const ttl = this.config.apiKeyNegativeCacheTtlMs;
    if (ttl === 0) return;
    this.unknown.delete(accessKey);
    if (this.unknown.size >= CACHE_MAX_ENTRIES) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(accessKey, Date.now() + ttl);
  }

  private async flushLastUsed(): Promise<void> {
    const batch = [...this.lastUsed.entries()];
    this.lastUsed.clear();
    for (const [id, at] of batch) {
      try {
        await this.keys.touchLastUsed(id, at);
      } catch (error) {
        this.logger.warn({ err: error, apiKeyId: id }, 'could not record lastUsedAt');
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flushLastUsed();
  }
}
