import { Injectable } from '@nestjs/common';
import { toPage, type Page } from '../../core/rows/page.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { MarketingPreferencesRepository } from './marketing-preferences.repository.js';
import { toMarketingPreferenceView, type MarketingPreferenceView } from './user-views.js';

/** The console's view of the users' marketing preferences of a business account (kept by the worker). */
@Injectable()
export class MarketingPreferencesService {
  constructor(
    private readonly accounts: BusinessAccountsRepository,
    private readonly preferences: MarketingPreferencesRepository,
  ) {}

  async list(
    organizationId: string,
    wabaId: string,
    query: { value?: string; user?: string; page: number; limit: number },
  ): Promise<Page<MarketingPreferenceView>> {
    const account = await this.accounts.getOwned(organizationId, wabaId);
    const { rows, total } = await this.preferences.page(account.id, { value: query.value, user: query.user }, query);
    return toPage(rows.map(toMarketingPreferenceView), total, query);
  }
}
