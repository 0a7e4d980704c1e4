import { Injectable } from '@nestjs/common';

/** A business account that moved to another organization (BusinessAccountsService.connect), inside its transaction. */
export interface AccountTakeover {
  businessAccountId: string;
  wabaId: string;
  previousOrganizationId: string;
  /** The new holder's `heldSince`: what the previous holder made before it is not the new holder's. */
  at: Date;
}

/** What a hook did, for the previous holder's audit entry (`{ campaignsCancelled: 2 }`). */
export type TakeoverHook = (takeover: AccountTakeover) => Promise<Record<string, number>>;

/**
 * What a takeover must also end in the modules above accounts (audit 3, finding 6): the previous holder's running
 * campaigns, which would otherwise go on sending with the new holder's token. Those modules register a hook when
 * they start (accounts imports none of them); every hook runs in the takeover's transaction, so a failing one rolls
 * the takeover back.
 */
@Injectable()
export class AccountTakeoverHooks {
  private readonly hooks: TakeoverHook[] = [];

  register(hook: TakeoverHook): void {
    this.hooks.push(hook);
  }

  async run(takeover: AccountTakeover): Promise<Record<string, number>> {
    const done: Record<string, number> = {};
    for (const hook of this.hooks) Object.assign(done, await hook(takeover));
    return done;
  }
}
