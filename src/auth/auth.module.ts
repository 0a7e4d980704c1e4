import { Global, Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-keys/api-key.authenticator.js';
import { ApiKeysRepository } from './api-keys/api-keys.repository.js';
import { AuthGuard } from './auth.guard.js';
import { SessionsRepository } from './sessions/sessions.repository.js';
import { SessionsService } from './sessions/sessions.service.js';

/** API keys and console sessions: who is calling. Global, since every audience module's routes are guarded by it. */
@Global()
@Module({
  providers: [ApiKeysRepository, ApiKeyAuthenticator, SessionsRepository, SessionsService, AuthGuard],
  exports: [ApiKeysRepository, ApiKeyAuthenticator, SessionsRepository, SessionsService, AuthGuard],
})
export class AuthModule {}
