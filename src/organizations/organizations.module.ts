import { Module } from '@nestjs/common';
import { OrganizationsRepository } from './organizations.repository.js';

/** The tenants: `organizations` and their settings (content retention). */
@Module({
  providers: [OrganizationsRepository],
  exports: [OrganizationsRepository],
})
export class OrganizationsModule {}
