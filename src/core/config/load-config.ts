import { AppConfig, ConfigError } from './app-config.js';

/** Boot helper: a bad configuration stops the process with exit 1 and a message naming each variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): AppConfig {
  try {
    return AppConfig.fromEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\nSee .env.example for every variable and its meaning.\n`);
      process.exit(1);
    }
    throw error;
  }
}
