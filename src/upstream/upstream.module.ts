import { Module } from '@nestjs/common';
import { GraphApiVersionCheck } from './graph-api-version.check.js';
import { WhatsAppClient } from './whatsapp.client.js';

/** The WhatsApp Cloud API client, and the check of its Graph API version at start. AppConfig comes from the global core module. */
@Module({
  providers: [WhatsAppClient, GraphApiVersionCheck],
  exports: [WhatsAppClient],
})
export class UpstreamModule {}
