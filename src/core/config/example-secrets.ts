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
    if (PLACEHOLDER.test(value)) problems.push(`${name} is the example value of .env.example: set a real secret in production`);
  };
  placeholder('WHATSAPP_APP_SECRET', config.whatsappAppSecret);
  placeholder('WHATSAPP_VERIFY_TOKEN', config.whatsappVerifyToken);
  for (const { id, key } of config.encryptionKeys) {
    if (isDegenerateKey(key)) {
      const which = keysVariable === 'ENCRYPTION_KEYS' ? `ENCRYPTION_KEYS (key "${id}")` : keysVariable;
      problems.push(`${which} is the example value of .env.example (every byte the same): generate a random key in production`);
    }
  }
  return problems;
}
