import { Module } from '@nestjs/common';
import { OperatorsRepository } from './operators.repository.js';
import { PasswordResetsRepository } from './password-resets.repository.js';

/**
 * The operators' tables (`operators`, `password_resets`), provided once here: the console and the platform-admin
 * command import this module rather than providing the repositories again.
 */
@Module({
  providers: [OperatorsRepository, PasswordResetsRepository],
  exports: [OperatorsRepository, PasswordResetsRepository],
})
export class OperatorsModule {}
