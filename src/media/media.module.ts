import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { UpstreamModule } from '../upstream/upstream.module.js';
import { MediaController } from './media.controller.js';
import { MediaService } from './media.service.js';

/** Media on Meta: uploads for sending by id, downloads of inbound media. */
@Module({
  imports: [UpstreamModule, AccountsModule, AuditModule],
  controllers: [MediaController],
  providers: [MediaService],
})
export class MediaModule {}
