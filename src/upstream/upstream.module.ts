import { Module } from '@nestjs/common';
import { WhatsAppClient } from './whatsapp.client.js';

/** The WhatsApp Cloud API client. AppConfig comes from the global core module. */
@Module({
  providers: [WhatsAppClient],
  exports: [WhatsAppClient],
})
export class UpstreamModule {}
