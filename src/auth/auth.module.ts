import { Global, Module } from '@nestjs/common';
import { ApiKeyAuthenticator } from './api-keys/api-key.authenticator.js';
import { AuthGuard } from './auth.guard.js';
import { SessionsService } from './sessions/sessions.service.js';

@Global()
@Module({
  providers: [ApiKeyAuthenticator, SessionsService, AuthGuard],
  exports: [ApiKeyAuthenticator, SessionsService, AuthGuard],
})
export class AuthModule {}
