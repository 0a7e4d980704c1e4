import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AccountTakeoverHooks, type AccountTakeover } from '../accounts/business-accounts/account-takeover-hooks.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import { CampaignsRepository } from './campaigns.repository.js';

export const CANCELLED_BY_TAKEOVER = 'cancelled by the service: another organization took the business account over';

/**
 * At a takeover, the previous holder's running and paused campaigns of the account are cancelled (audit 3, finding
 * 6): they would go on sending its recipients with the new holder's token. Their pending recipients are cancelled in
 * the same transaction; a runner in the middle of one stops at its next lease renewal, as after any cancel.
 */
@Injectable()
export class CampaignsOnTakeover implements OnModuleInit {
  constructor(
    private readonly hooks: AccountTakeoverHooks,
    private readonly campaigns: CampaignsRepository,
    private readonly recipients: CampaignRecipientsRepository,
  ) {}

  onModuleInit(): void {
    this.hooks.register((takeover) => this.cancel(takeover));
  }

  async cancel(takeover: AccountTakeover): Promise<{ campaignsCancelled: number }> {
    const ids = await this.campaigns.cancelBefore(takeover.businessAccountId, takeover.at, CANCELLED_BY_TAKEOVER);
    await this.recipients.cancelPending(ids);
    return { campaignsCancelled: ids.length };
  }
}
