import { ConfigError, EnvReader } from './env-reader.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';
import { readRedisTarget, type RedisCluster } from './redis-cluster-nodes.js';
import { exampleSecretProblems, weakSecretProblems } from './example-secrets.js';

/** Webhook items per worker transaction unless WEBHOOK_EVENT_CHUNK says otherwise (bench:floor measures with it too). */
export const DEFAULT_WEBHOOK_EVENT_CHUNK = 500;
/** Delivery jobs a worker runs at once, and connections a process's pool holds, unless set (the bench's floor uses both). */
export const DEFAULT_WORKER_CONCURRENCY = 16;
export const DEFAULT_DATABASE_POOL_SIZE = 10;

/** Days back a webhook item's dedupe key is looked up (Meta redelivers for up to 7 days; a day more for clocks and queues). */
export const EVENTS_DEDUPE_WINDOW_DAYS = 8;

export type SignupMode = 'open' | 'invite' | 'closed';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * The validated configuration, read once at boot. Nothing else in the code base reads process.env.
 * `AppConfig.fromEnv` collects every problem and throws one ConfigError naming each variable.
 */
export class AppConfig {
  readonly nodeEnv!: 'development' | 'test' | 'production';
  readonly port!: number;
  /** Address the API listens on: loopback unless asked (HOST), every interface in production (containers). */
  readonly host!: string;
  readonly databaseUrl!: string;
  /** What is session-bound (LISTEN for the caches and long polls): PostgreSQL itself, never a transaction pooler. */
  readonly databaseDirectUrl!: string;
  /** `named`: each hot statement prepared once per connection; `unnamed`: for poolers without prepared statements. */
  readonly databasePreparedStatements!: 'named' | 'unnamed';
  readonly databasePoolSize!: number;
  /** Connections of the pool tenants' reads never take together (left for sends, webhook ingest, the worker). */
  readonly databasePoolReserved!: number;
  // ---- Read replica (issue 39): a standby for the reads that tolerate lag (core/db/replica-router.ts) ----
  /** A streaming standby of DATABASE_URL's primary, for the lists and analytics; '' when there is none. */
  readonly databaseReadUrl!: string;
  /** Lag past which the replica's reads go to the primary instead (measured every second). */
  readonly databaseReadMaxLagMs!: number;
  /** Requests of one organization in flight at once per API process (key pairs and console together); more answer 429. */
  readonly organizationRequestsInFlight!: number;
  /** Reads (GET) of one organization in flight at once per API process; more answer 429. */
  readonly organizationReadsInFlight!: number;
  /** GET /messages counts matching messages up to this many; beyond, `total` is this and `totalIsLowerBound` is true. */
  readonly messagesCountLimit!: number;
  /** REDIS_URL: one Redis; '' when REDIS_CLUSTER_NODES names a cluster instead. */
  readonly redisUrl!: string;
  /**
   * REDIS_CLUSTER_NODES: a Redis Cluster's seeds; null for one Redis (REDIS_URL). On a cluster the queues' prefix and
   * the keys a script touches together carry hash tags (core/redis/redis-keys.ts).
   */
  readonly redisCluster!: RedisCluster | null;
  readonly queuePrefix!: string;
  readonly swaggerEnabled!: boolean;
  readonly upstreamBaseUrl!: string;
  readonly upstreamConnectTimeoutMs!: number;
  readonly upstreamTimeoutMs!: number;
  readonly whatsappAppSecret!: string;
  readonly whatsappVerifyToken!: string;
  /** Meta's id of this app: a webhook subscription counts only when GET subscribed_apps lists it. Empty: any app. */
  readonly whatsappAppId!: string;
  /** Keys of upstream-token encryption, newest first: new ciphertexts use the first, any may decrypt. */
  readonly encryptionKeys!: EncryptionKey[];
  readonly logLevel!: LogLevel;
  /** Express `trust proxy`: false, a hop count, or the proxies' addresses/CIDRs; never "trust everything". */
  readonly trustProxy!: TrustProxy;
  readonly bodyLimitBytes!: number;
  /** Largest body read from a caller not verified yet (no credential, or one that did not authenticate). */
  readonly unauthenticatedBodyLimitBytes!: number;
  /** Bodies read at once per client address from unverified callers, and campaign-sized ones; more answer 429. */
  readonly bodyParsesPerAddress!: number;
  readonly webhookBodyLimitBytes!: number;
  readonly sessionIdleTtlSeconds!: number;
  readonly sessionAbsoluteTtlSeconds!: number;
  readonly consoleAllowedOrigins!: string[];
  readonly loginMaxFailures!: number;
  readonly loginEmailMaxFailures!: number;
  readonly loginAddressMaxFailures!: number;
  readonly loginWindowSeconds!: number;
  /** How long an (email, address) pair that signed in successfully stays exempt from the per-email login budget. */
  readonly loginKnownAddressTtlSeconds!: number;
  readonly signupMode!: SignupMode;
  readonly signupMaxPerAddress!: number;
  readonly signupWindowSeconds!: number;
  readonly invitationTtlSeconds!: number;
  /** Invitations of one organization pending at once (not used, revoked or expired); more are refused (409). */
  readonly invitationsMaxPending!: number;
  /** The per-address bucket taken before the body is parsed, for requests nobody is signed in for (auth/unauthenticated-rate-limit.ts). */
  readonly unauthenticatedRateLimitPerSecond!: number;
  readonly unauthenticatedRateLimitBurst!: number;
  /** How long a password-reset link an owner issues stays valid. */
  readonly passwordResetTtlSeconds!: number;
  /** log2 of scrypt's N for new password hashes (17 → N = 131072). */
  readonly passwordHashCost!: number;
  /** scrypt computations at once per process (each holds 128 × N × r bytes: 128 MiB at the default cost); the rest wait. */
  readonly scryptConcurrency!: number;
  readonly apiKeyCacheTtlMs!: number;
  readonly rateLimitPerSecond!: number;
  readonly rateLimitBurst!: number;
  /** The bucket of a business account, over all its key pairs. */
  readonly accountRateLimitPerSecond!: number;
  readonly accountRateLimitBurst!: number;
  /** Active (not revoked) key pairs one business account may have; creating more is refused (409). */
  readonly apiKeysMaxPerAccount!: number;
  readonly consoleRateLimitPerSecond!: number;
  readonly consoleRateLimitBurst!: number;
  readonly consoleAddressRateLimitPerSecond!: number;
  readonly consoleAddressRateLimitBurst!: number;
  readonly apiKeyNegativeCacheTtlMs!: number;
  readonly workerConcurrency!: number;
  /** A worker told to stop (SIGTERM, SIGINT) exits after this long whatever is still closing. */
  readonly workerShutdownTimeoutMs!: number;
  readonly webhookSweepIntervalMs!: number;
  readonly webhookMaxAttempts!: number;
  readonly webhookRetentionDays!: number;
  /** Days events are kept (whole weekly partitions dropped once every row in them is older); 0 keeps them forever. */
  readonly eventsRetentionDays!: number;
  /**
   * Days message content and raw payloads are kept for an organization without a setting of its own (PATCH
   * /organization/settings); 0 keeps them forever. Scrubbed every PURGE_INTERVAL_SECONDS (src/retention).
   */
  readonly contentRetentionDays!: number;
  readonly webhookBatchWindowMs!: number;
  readonly webhookBatchMaxRows!: number;
  readonly webhookJobWindowMs!: number;
  /** Webhook items (statuses, messages, changes) the worker stores and applies per transaction. */
  readonly webhookEventChunk!: number;
  /** Acknowledgements waiting at once in one API process from which it asks the workers to hold processing (0: never). */
  readonly webhookHoldInFlight!: number;
  /** The longest the workers hold processing for a saturated receiver before they process anyway (0: never hold). */
  readonly webhookHoldMaxMs!: number;
  readonly webhookFastPath!: boolean;
  readonly shutdownDrainMs!: number;
  readonly metricsToken!: string;
  readonly workerMetricsPort!: number;
  /** Address of the worker's metrics port: loopback unless asked (a scraper elsewhere needs WORKER_METRICS_HOST=0.0.0.0). */
  readonly workerMetricsHost!: string;
  readonly purgeIntervalSeconds!: number;
  readonly credentialCheckIntervalSeconds!: number;
  /** Where clients reach this API (scheme://host[:port][/prefix]); absolute media links start with it. */
  readonly publicBaseUrl!: string;
  readonly mediaLinkTtlSeconds!: number;
  readonly mediaDownloadsPerAccount!: number;
  readonly messagesFeedWaitersPerAccount!: number;
  /** Long polls (feeds with `wait`) one organization may have waiting at once per API process; more answer 429. */
  readonly longPollsPerOrganization!: number;
  /** Long polls one console session (or key pair) may have waiting at once per API process. */
  readonly longPollsPerSession!: number;
  /** Media uploads and downloads held open at once per organization (per API process); more answer 429. */
  readonly mediaMaxTransfersPerOrganization!: number;
  /** Media transfers per API process for everyone; also the size of media's own upstream socket pool. */
  readonly mediaMaxTransfers!: number;
  /** An upload whose client sends nothing for this long is ended (408) and its upstream upload aborted. */
  readonly mediaIdleTimeoutMs!: number;
  /** The longest a media transfer may take, from the first byte to Meta's answer (or the last byte sent back). */
  readonly mediaDeadlineMs!: number;

  /** Per-number pacing on (the default); off only to measure its cost, or while Redis is known to be broken. */
  readonly pacingEnabled!: boolean;
  /** How long a send over its number's pace waits for a slot before the 429 (messages/pacing). */
  readonly pacingMaxWaitMs!: number;
  /** A number's tier of sends per this many ms (one slot every PACING_WINDOW_MS / tier; a little over 1 s: a margin for jitter on the way to Meta). */
  readonly pacingWindowMs!: number;
  /** A paced send that would leave more than this after its slot (the process was busy) takes a new slot instead. */
  readonly pacingLateMs!: number;
  /** Recipients a campaign runner claims (and stores messages for) per statement. */
  readonly campaignChunkSize!: number;
  /** Upstream calls one campaign runner keeps in flight at most. */
  readonly campaignMaxInFlight!: number;
  /** A campaign's lease: a runner that stops renewing it for this long (killed) is replaced. */
  readonly campaignLeaseMs!: number;
  /** A claimed recipient whose message is still pending this long after its runner died is failed as unconfirmed (never resent by itself). */
  readonly campaignUnconfirmedAfterMs!: number;
  /** The body limit of POST /business-accounts/{wabaId}/campaigns (up to 100,000 recipients). */
  readonly campaignBodyLimitBytes!: number;
  /** Campaigns one worker process runs at once. */
  readonly campaignConcurrency!: number;
  /** How long a campaign runs before it hands its worker slot to the next campaign waiting (and queues behind it). */
  readonly campaignSliceMs!: number;
  /** Campaigns of one organization running at once (started, resumed or retried past it: 409). */
  readonly campaignsRunningPerOrganization!: number;
  /** Recipients of the campaigns one organization creates in any 24 hours (past it: 429). */
  readonly campaignRecipientsPerDayPerOrganization!: number;

  static fromEnv(env: NodeJS.ProcessEnv = process.env): AppConfig {
    const r = new EnvReader(env);
    const nodeEnv = r.oneOf('NODE_ENV', ['development', 'test', 'production'] as const, 'development');
    const loginMaxFailures = r.int('LOGIN_MAX_FAILURES', { default: 5, min: 1 });
    const databasePoolSize = r.int('DATABASE_POOL_SIZE', { default: DEFAULT_DATABASE_POOL_SIZE, min: 1, max: 500 });
    const config: AppConfig = Object.assign(new AppConfig(), {
      nodeEnv,
      port: r.int('PORT', { default: 3000, min: 0, max: 65535 }),
      host: r.string('HOST', {
        default: nodeEnv === 'production' ? '0.0.0.0' : '127.0.0.1',
        pattern: /^[0-9a-fA-F.:]+$|^localhost$/,
      }),
      databaseUrl: r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
      databaseDirectUrl: env.DATABASE_DIRECT_URL
        ? r.url('DATABASE_DIRECT_URL', ['postgres:', 'postgresql:'])
        : r.url('DATABASE_URL', ['postgres:', 'postgresql:']),
      databasePreparedStatements: r.oneOf('DATABASE_PREPARED_STATEMENTS', ['named', 'unnamed'] as const, 'named'),
      databasePoolSize,
      databasePoolReserved: r.int('DATABASE_POOL_RESERVED', {
        default: Math.floor(databasePoolSize / 4),
        min: 0,
        max: databasePoolSize - 1,
      }),
      ...readReplica(r, env),
      organizationRequestsInFlight: r.int('ORGANIZATION_REQUESTS_IN_FLIGHT', { default: 128, min: 1, max: 100_000 }),
      organizationReadsInFlight: r.int('ORGANIZATION_READS_IN_FLIGHT', { default: 8, min: 1, max: 10_000 }),
      messagesCountLimit: r.int('MESSAGES_COUNT_LIMIT', { default: 10_000, min: 1, max: 100_000_000 }),
      ...readRedisTarget(r),
      queuePrefix: r.string('QUEUE_PREFIX', { default: 'bmapi', pattern: /^[A-Za-z0-9_-]{1,40}$/ }),
      // The API's whole surface, described: public in development, opt-in in production.
      swaggerEnabled: r.bool('SWAGGER_ENABLED', nodeEnv !== 'production'),
      upstreamBaseUrl: r.url('UPSTREAM_BASE_URL', ['http:', 'https:']).replace(/\/+$/, ''),
      upstreamConnectTimeoutMs: r.int('UPSTREAM_CONNECT_TIMEOUT_MS', { default: 3000, min: 1 }),
      upstreamTimeoutMs: r.int('UPSTREAM_TIMEOUT_MS', { default: 10000, min: 1 }),
      whatsappAppSecret: r.string('WHATSAPP_APP_SECRET', { minLength: 8 }),
      whatsappVerifyToken: r.string('WHATSAPP_VERIFY_TOKEN', { minLength: 8 }),
      whatsappAppId: r.string('WHATSAPP_APP_ID', { default: '', pattern: /^(\d{1,32})?$/ }),
      encryptionKeys: r.keyRing('ENCRYPTION_KEYS', 'ENCRYPTION_KEY'),
      logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
      trustProxy: r.parsed('TRUST_PROXY', false, parseTrustProxy),
      bodyLimitBytes: r.int('BODY_LIMIT_BYTES', { default: 1024 * 1024, min: 1024 }),
      unauthenticatedBodyLimitBytes: r.int('UNAUTHENTICATED_BODY_LIMIT_BYTES', { default: 64 * 1024, min: 1024 }),
      bodyParsesPerAddress: r.int('BODY_PARSES_PER_ADDRESS', { default: 8, min: 1, max: 10_000 }),
      webhookBodyLimitBytes: r.int('WEBHOOK_BODY_LIMIT_BYTES', { default: 3 * 1024 * 1024, min: 1024 }),
      sessionIdleTtlSeconds: r.int('SESSION_IDLE_TTL_SECONDS', { default: 12 * 3600, min: 60 }),
      sessionAbsoluteTtlSeconds: r.int('SESSION_ABSOLUTE_TTL_SECONDS', { default: 7 * 24 * 3600, min: 60 }),
      consoleAllowedOrigins: r.list('CONSOLE_ALLOWED_ORIGINS'),
      loginMaxFailures,
      loginEmailMaxFailures: r.int('LOGIN_EMAIL_MAX_FAILURES', {
        default: loginMaxFailures * 4,
        min: loginMaxFailures + 1,
      }),
      loginAddressMaxFailures: r.int('LOGIN_ADDRESS_MAX_FAILURES', { default: loginMaxFailures * 4, min: 1 }),
      loginWindowSeconds: r.int('LOGIN_WINDOW_SECONDS', { default: 900, min: 1 }),
      loginKnownAddressTtlSeconds: r.int('LOGIN_KNOWN_ADDRESS_TTL_SECONDS', { default: 30 * 24 * 3600, min: 0 }),
      signupMode: r.oneOf(
        'SIGNUP_MODE',
        ['open', 'invite', 'closed'] as const,
        nodeEnv === 'production' ? 'invite' : 'open',
      ),
      signupMaxPerAddress: r.int('SIGNUP_MAX_PER_ADDRESS', { default: 5, min: 1 }),
      signupWindowSeconds: r.int('SIGNUP_WINDOW_SECONDS', { default: 3600, min: 1 }),
      invitationTtlSeconds: r.int('INVITATION_TTL_SECONDS', { default: 7 * 24 * 3600, min: 60 }),
      invitationsMaxPending: r.int('INVITATIONS_MAX_PENDING', { default: 20, min: 1, max: 10_000 }),
      unauthenticatedRateLimitPerSecond: r.rate('UNAUTHENTICATED_RATE_LIMIT_PER_SECOND', { default: 2, min: 0.001 }),
      unauthenticatedRateLimitBurst: r.int('UNAUTHENTICATED_RATE_LIMIT_BURST', { default: 30, min: 1 }),
      passwordResetTtlSeconds: r.int('PASSWORD_RESET_TTL_SECONDS', { default: 24 * 3600, min: 60 }),
      passwordHashCost: r.int('PASSWORD_HASH_COST', { default: 17, min: 10, max: 20 }),
      scryptConcurrency: r.int('SCRYPT_CONCURRENCY', { default: 2, min: 1, max: 64 }),
      apiKeyCacheTtlMs: r.int('API_KEY_CACHE_TTL_MS', { default: 1000, min: 0, max: 60000 }),
      rateLimitPerSecond: r.rate('RATE_LIMIT_PER_SECOND', { default: 100, min: 0.001 }),
      rateLimitBurst: r.int('RATE_LIMIT_BURST', { default: 200, min: 1 }),
      accountRateLimitPerSecond: r.rate('ACCOUNT_RATE_LIMIT_PER_SECOND', { default: 200, min: 0.001 }),
      accountRateLimitBurst: r.int('ACCOUNT_RATE_LIMIT_BURST', { default: 400, min: 1 }),
      apiKeysMaxPerAccount: r.int('API_KEYS_MAX_PER_ACCOUNT', { default: 10, min: 1, max: 1000 }),
      consoleRateLimitPerSecond: r.rate('CONSOLE_RATE_LIMIT_PER_SECOND', { default: 20, min: 0.001 }),
      consoleRateLimitBurst: r.int('CONSOLE_RATE_LIMIT_BURST', { default: 200, min: 1 }),
      consoleAddressRateLimitPerSecond: r.rate('CONSOLE_ADDRESS_RATE_LIMIT_PER_SECOND', { default: 50, min: 0.001 }),
      consoleAddressRateLimitBurst: r.int('CONSOLE_ADDRESS_RATE_LIMIT_BURST', { default: 500, min: 1 }),
      apiKeyNegativeCacheTtlMs: r.int('API_KEY_NEGATIVE_CACHE_TTL_MS', { default: 30_000, min: 0, max: 600_000 }),
      pacingEnabled: r.bool('PACING_ENABLED', true),
      pacingMaxWaitMs: r.int('PACING_MAX_WAIT_MS', { default: 2000, min: 0, max: 30_000 }),
      pacingWindowMs: r.int('PACING_WINDOW_MS', { default: 1040, min: 1000, max: 10_000 }),
      pacingLateMs: r.int('PACING_LATE_MS', { default: 10, min: 1, max: 10_000 }),
      campaignChunkSize: r.int('CAMPAIGN_CHUNK_SIZE', { default: 250, min: 1, max: 5000 }),
      campaignMaxInFlight: r.int('CAMPAIGN_MAX_IN_FLIGHT', { default: 256, min: 1, max: 5000 }),
      campaignLeaseMs: r.int('CAMPAIGN_LEASE_MS', { default: 15_000, min: 1000, max: 600_000 }),
      campaignUnconfirmedAfterMs: r.int('CAMPAIGN_UNCONFIRMED_AFTER_MS', { default: 60_000, min: 0, max: 86_400_000 }),
      campaignBodyLimitBytes: r.int('CAMPAIGN_BODY_LIMIT_BYTES', { default: 16 * 1024 * 1024, min: 1024 }),
      campaignConcurrency: r.int('CAMPAIGN_CONCURRENCY', { default: 4, min: 1, max: 100 }),
      campaignSliceMs: r.int('CAMPAIGN_SLICE_MS', { default: 10_000, min: 100, max: 3_600_000 }),
      campaignsRunningPerOrganization: r.int('CAMPAIGNS_RUNNING_PER_ORGANIZATION', {
        default: 10,
        min: 1,
        max: 10_000,
      }),
      campaignRecipientsPerDayPerOrganization: r.int('CAMPAIGN_RECIPIENTS_PER_DAY_PER_ORGANIZATION', {
        default: 1_000_000,
        min: 1,
        max: 1_000_000_000,
      }),
      workerConcurrency: r.int('WORKER_CONCURRENCY', { default: DEFAULT_WORKER_CONCURRENCY, min: 1, max: 1000 }),
      workerShutdownTimeoutMs: r.int('WORKER_SHUTDOWN_TIMEOUT_MS', { default: 20_000, min: 100, max: 600_000 }),
      webhookSweepIntervalMs: r.int('WEBHOOK_SWEEP_INTERVAL_MS', { default: 5000, min: 100 }),
      webhookMaxAttempts: r.int('WEBHOOK_MAX_ATTEMPTS', { default: 8, min: 1, max: 100 }),
      webhookRetentionDays: r.int('WEBHOOK_RETENTION_DAYS', { default: 30, min: 0, max: 3650 }),
      eventsRetentionDays: r.int('EVENTS_RETENTION_DAYS', { default: 90, min: 0, max: 36500 }),
      contentRetentionDays: r.int('CONTENT_RETENTION_DAYS', { default: 0, min: 0, max: 36500 }),
      webhookBatchWindowMs: r.int('WEBHOOK_BATCH_WINDOW_MS', { default: 2, min: 0, max: 1000 }),
      webhookBatchMaxRows: r.int('WEBHOOK_BATCH_MAX_ROWS', { default: 200, min: 1, max: 1000 }),
      webhookJobWindowMs: r.int('WEBHOOK_JOB_WINDOW_MS', { default: 20, min: 0, max: 1000 }),
      webhookEventChunk: r.int('WEBHOOK_EVENT_CHUNK', { default: DEFAULT_WEBHOOK_EVENT_CHUNK, min: 1, max: 5000 }),
      webhookHoldInFlight: r.int('WEBHOOK_HOLD_PROCESSING_IN_FLIGHT', { default: 32, min: 0, max: 100_000 }),
      webhookHoldMaxMs: r.int('WEBHOOK_HOLD_PROCESSING_MAX_MS', { default: 10_000, min: 0, max: 600_000 }),
      shutdownDrainMs: r.int('SHUTDOWN_DRAIN_MS', { default: 0, min: 0, max: 120_000 }),
      metricsToken: r.string('METRICS_TOKEN', { default: '' }),
      workerMetricsPort: r.int('WORKER_METRICS_PORT', { default: 9464, min: -1, max: 65535 }),
      workerMetricsHost: r.string('WORKER_METRICS_HOST', {
        default: '127.0.0.1',
        pattern: /^[0-9a-fA-F.:]+$|^localhost$/,
      }),
      webhookFastPath: r.bool('WEBHOOK_FAST_PATH', true),
      purgeIntervalSeconds: r.int('PURGE_INTERVAL_SECONDS', { default: 3600, min: 1 }),
      credentialCheckIntervalSeconds: r.int('CREDENTIAL_CHECK_INTERVAL_SECONDS', { default: 6 * 3600, min: 1 }),
      publicBaseUrl: r
        .string('PUBLIC_BASE_URL', { default: '', pattern: /^(https?:\/\/[^\s?#]+)?$/ })
        .replace(/\/+$/, ''),
      mediaLinkTtlSeconds: r.int('MEDIA_LINK_TTL_SECONDS', { default: 300, min: 10, max: 3600 }),
      mediaDownloadsPerAccount: r.int('MEDIA_DOWNLOADS_PER_ACCOUNT', { default: 4, min: 1, max: 1000 }),
      messagesFeedWaitersPerAccount: r.int('MESSAGES_FEED_WAITERS_PER_ACCOUNT', { default: 50, min: 1, max: 1000 }),
      longPollsPerOrganization: r.int('LONG_POLLS_PER_ORGANIZATION', { default: 100, min: 1, max: 1000 }),
      longPollsPerSession: r.int('LONG_POLLS_PER_SESSION', { default: 10, min: 1, max: 1000 }),
      mediaMaxTransfersPerOrganization: r.int('MEDIA_MAX_TRANSFERS_PER_ORGANIZATION', {
        default: 4,
        min: 1,
        max: 1000,
      }),
      mediaMaxTransfers: r.int('MEDIA_MAX_TRANSFERS', { default: 32, min: 1, max: 1000 }),
      mediaIdleTimeoutMs: r.int('MEDIA_IDLE_TIMEOUT_MS', { default: 15_000, min: 100, max: 600_000 }),
      mediaDeadlineMs: r.int('MEDIA_DEADLINE_MS', { default: 120_000, min: 1000, max: 3_600_000 }),
    });
    // The dedupe of Meta's redeliveries looks back at the events of the last EVENTS_DEDUPE_WINDOW_DAYS: they must still be there.
    if (config.eventsRetentionDays !== 0 && config.eventsRetentionDays < EVENTS_DEDUPE_WINDOW_DAYS) {
      r.problem(
        `EVENTS_RETENTION_DAYS must be 0 (keep forever) or at least ${EVENTS_DEDUPE_WINDOW_DAYS}: Meta redelivers for up to 7 days and redeliveries are recognised against the stored events`,
      );
    }
    // Platform administrators used to be whoever registered with one of these emails (never verified): refuse the
    // variable rather than silently drop it, so an operator upgrading learns how administrators are granted now.
    if (r.list('ADMIN_EMAILS').length > 0) {
      r.problem(
        'ADMIN_EMAILS is no longer read (an email anyone can register is no proof): unset it and grant platform administrators with npm run platform-admin -- grant <email>',
      );
    }
    if (nodeEnv === 'production') {
      const keysVariable = env.ENCRYPTION_KEYS?.trim() ? 'ENCRYPTION_KEYS' : 'ENCRYPTION_KEY';
      exampleSecretProblems(config, keysVariable).forEach((problem) => r.problem(problem));
      weakSecretProblems(config).forEach((problem) => r.problem(problem));
    }
    r.throwIfInvalid();
    return config;
  }

  get isProduction(): boolean {
    return this.nodeEnv === 'production';
  }
}

/**
 * DATABASE_READ_URL and its lag bound. The replica serves only reads outside transactions (core/db/replica-router.ts);
 * DATABASE_PREPARED_STATEMENTS applies to it as to DATABASE_URL (a pooler in front of the standby needs `unnamed`
 * just the same). A read URL naming the primary itself, or a lag bound without a read URL, is refused: either would
 * look like a replica in use while every read still reaches the primary.
 */
function readReplica(
  r: EnvReader,
  env: NodeJS.ProcessEnv,
): Pick<AppConfig, 'databaseReadUrl' | 'databaseReadMaxLagMs'> {
  const databaseReadMaxLagMs = r.int('DATABASE_READ_MAX_LAG_MS', { default: 5000, min: 1000, max: 600_000 });
  if (!env.DATABASE_READ_URL?.trim()) {
    if (env.DATABASE_READ_MAX_LAG_MS?.trim())
      r.problem('DATABASE_READ_MAX_LAG_MS is set without DATABASE_READ_URL: set the replica’s URL, or unset both');
    return { databaseReadUrl: '', databaseReadMaxLagMs };
  }
  const databaseReadUrl = r.url('DATABASE_READ_URL', ['postgres:', 'postgresql:']);
  const server = (url: string | undefined) => {
    try {
      const u = new URL(url ?? '');
      return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
    } catch {
      return undefined;
    }
  };
  const read = server(databaseReadUrl);
  for (const name of ['DATABASE_URL', 'DATABASE_DIRECT_URL'] as const)
    if (read && read === server(env[name]))
      r.problem(
        `DATABASE_READ_URL names the same server and database as ${name}: point it at a streaming standby of that primary, or unset it`,
      );
  return { databaseReadUrl, databaseReadMaxLagMs };
}

export interface EncryptionKey {
  /** Written into every ciphertext, so the key that sealed it is found without trying each one. */
  id: string;
  key: Buffer;
}

export { ConfigError };
