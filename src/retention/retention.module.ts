import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { EventsModule } from '../events/events.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { ContentRetention } from './content-retention.js';

/** Content retention across the domain modules' tables (the worker's `content-retention` task). */
@Module({
  imports: [AccountsModule, AuditModule, EventsModule, MessagesModule, OrganizationsModule, WebhooksModule],
  providers: [ContentRetention],
  exports: [ContentRetention],
})
export class RetentionModule {}
