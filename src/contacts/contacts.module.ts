import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { CampaignsModule } from '../campaigns/campaigns.module.js';
import { EventsModule } from '../events/events.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { ContactHash } from './contact-hash.js';
import { ContactsController } from './contacts.controller.js';
import { ContactsService } from './contacts.service.js';

/** One contact's data across the domain modules' tables: export and erasure (the console's routes). */
@Module({
  imports: [AccountsModule, AuditModule, CampaignsModule, EventsModule, MessagesModule, WebhooksModule],
  controllers: [ContactsController],
  providers: [ContactsService, ContactHash],
})
export class ContactsModule {}
