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

export function exampleSecretProblems(config: SecretsToCheck, keysVariable: string): string[] {
  const problems: string[] = [];
  const placeholder = (name: string, value: string) => {
    if (PLACEHOLDER.test(value))
      problems.push(`${name} is the example value of .env.example: set a real secret in production`);
  };
  placeholder('WHATSAPP_APP_SECRET', config.whatsappAppSecret);
  placeholder('WHATSAPP_VERIFY_TOKEN', config.whatsappVerifyToken);
  for (const { id, key } of config.encryptionKeys) {
    if (isDegenerateKey(key)) {
      const which = keysVariable === 'ENCRYPTION_KEYS' ? `ENCRYPTION_KEYS (key "${id}")` : keysVariable;
      problems.push(
        `${which} is the example value of .env.example (every byte the same): generate a random key in production`,
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
