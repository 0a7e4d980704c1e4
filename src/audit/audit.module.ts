import { Module } from '@nestjs/common';
import { AuditLogsRepository } from './audit-logs.repository.js';
import { AuditService } from './audit.service.js';

/** The audit log: written by the domain modules in their own transactions, read by the console. */
@Module({
  providers: [AuditLogsRepository, AuditService],
  exports: [AuditService],
})
export class AuditModule {}
