import { Injectable } from '@nestjs/common';
import { AuditService } from '../../audit/audit.service.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AppConfig } from '../../core/config/app-config.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { OrganizationsRepository, type Organization } from '../../organizations/organizations.repository.js';
import type { OrganizationSettingsView } from './organization-settings.dto.js';

/** The organization's own settings: today its content retention (src/retention runs it). */
@Injectable()
export class OrganizationSettingsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly uow: UnitOfWork,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {}

  async get(organizationId: string): Promise<OrganizationSettingsView> {
    return this.view(await this.organizations.get(organizationId));
  }

  /** Sets the retention (days, 0 for forever, null for the default); audited with the value before and after. */
  update(operator: ConsoleScope, contentRetentionDays: number | null): Promise<OrganizationSettingsView> {
    return this.uow.run(async () => {
      const before = await this.organizations.get(operator.organizationId);
      const after = await this.organizations.setContentRetention(operator.organizationId, contentRetentionDays);
      if (before.contentRetentionDays !== after.contentRetentionDays)
        await this.audit.record(
          operator,
          'organization.settings_changed',
          { type: 'organization', id: operator.organizationId },
          { contentRetentionDays: { from: before.contentRetentionDays, to: after.contentRetentionDays } },
        );
      return this.view(after);
    });
  }

  private view(o: Organization): OrganizationSettingsView {
    return {
      id: o.id,
      name: o.name,
      contentRetentionDays: o.contentRetentionDays,
      defaultContentRetentionDays: this.config.contentRetentionDays,
      effectiveContentRetentionDays: o.contentRetentionDays ?? this.config.contentRetentionDays,
      contentScrubbedThrough: o.contentScrubbedThrough?.toISOString() ?? null,
    };
  }
}
