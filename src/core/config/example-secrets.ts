/**
 * Values that must never reach production: the placeholders of `.env.example` (and the key dev.sh would
 * replace). A production start with one of them stops with a message naming each variable, since a secret
 * that is published in the repository protects nothing (anyone could sign webhooks or decrypt tokens).
 */
const PLACEHOLDER = /change-?me/i;

/** A key whose bytes are all the same (the all-zero example key, `aaaa…`): certainly not random. */
const isDegenerateKey = (key: Buffer) => key.length > 0 && key.every((b) => b === key[0]);

export interface SecretsToCheck {
  whatsappAppSecret: string;
  whatsappVerifyToken: string;
  encryptionKeys: { id: string; key: Buffer }[];
}

/**
 * A key no random generator gives (audit 3, finding 10): fewer than 16 distinct bytes of 32 (a repeated pattern such
 * as `0123456789abcdef` × 4), printable characters only (a passphrase typed as the key), or bytes in steady steps
 * (`00 01 02 …`). A random 32-byte key is any of these with a probability below 10^-13.
 */
export function isLowEntropyKey(key: Buffer): boolean {
  if (key.length === 0) return false;
  const distinct = new Set(key).size;
  const printable = key.every((b) => b >= 0x20 && b <= 0x7e);
  const step = ((key[1] ?? 0) - key[0]! + 256) % 256;
  const steady = key.length > 1 && key.every((b, i) => i === 0 || (b - key[i - 1]! + 256) % 256 === step);
  return distinct < Math.min(16, key.length) || printable || steady;
}

export function exampleSecretProblems(config: SecretsToCheck, keysVariable: string): string[] {
  const problems: string[] = [];
  const placeholder = (name: string, value: string) => {
    if (PLACEHOLDER.test(value))
      problems.push(`${name} is the example value of .env.example: set a real secret in production`);
  };
  placeholder('WHATSAPP_APP_SECRET', config.whatsappAppSecret);
  placeholder('WHATSAPP_VERIFY_TOKEN', config.whatsappVerifyToken);
  for (const { id, key } of config.encryptionKeys) {
    const which = keysVariable === 'ENCRYPTION_KEYS' ? `ENCRYPTION_KEYS (key "${id}")` : keysVariable;
    if (isDegenerateKey(key)) {
      problems.push(
        `${which} is the example value of .env.example (every byte the same): generate a random key in production`,
      );
    } else if (isLowEntropyKey(key)) {
      problems.push(
        `${which} is too weak for production (a pattern, a passphrase or too few distinct bytes, not 32 random bytes): generate one with node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`,
      );
    }
  }
  return problems;
}

/** The shortest shared secret production accepts: 32 random characters (Meta's app secrets are 32 hex digits). */
export const MIN_SECRET_LENGTH = 32;
/** Words a human picks: a secret containing one is not random, whatever its length. */
const WEAK_WORDS = /password|passwd|secret|changeme|letmein|qwerty|admin|token|12345|example|default|test/i;

/**
 * Production only: the shared secrets (webhook HMAC key, verify token, metrics token) must look random: at least
 * MIN_SECRET_LENGTH characters, several distinct ones, and no common word. METRICS_TOKEN is required, so that
 * /metrics is never open on a production deployment. Values are never printed.
 */
export function weakSecretProblems(config: {
  whatsappAppSecret: string;
  whatsappVerifyToken: string;
  metricsToken: string;
}): string[] {
  const problems: string[] = [];
  if (config.metricsToken === '')
    problems.push(
      `METRICS_TOKEN is required in production (GET /metrics would be open to anyone): set ${MIN_SECRET_LENGTH}+ random characters`,
    );
  for (const [name, value] of [
    ['WHATSAPP_APP_SECRET', config.whatsappAppSecret],
    ['WHATSAPP_VERIFY_TOKEN', config.whatsappVerifyToken],
    ['METRICS_TOKEN', config.metricsToken],
  ] as const) {
    if (value === '' || PLACEHOLDER.test(value)) continue;
    if (value.length < MIN_SECRET_LENGTH || new Set(value).size < 8 || WEAK_WORDS.test(value)) {
      problems.push(
        `${name} is too weak for production: use at least ${MIN_SECRET_LENGTH} random characters (e.g. node -e "console.log(require('crypto').randomBytes(24).toString('base64url'))")`,
      );
    }
  }
  return problems;
}
