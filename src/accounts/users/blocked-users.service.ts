import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { AuditService } from '../../audit/audit.service.js';
import { InvalidInput, NotFound } from '../../core/errors/domain-errors.js';
import { toPage, type Page } from '../../core/rows/page.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { asDomainFailure } from '../../upstream/upstream-failure.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { BusinessAccountsRepository } from '../business-accounts/business-accounts.repository.js';
import { AccountCredentials } from '../business-accounts/account-credentials.js';
import { PhoneNumbersRepository } from '../phone-numbers/phone-numbers.repository.js';
import { BlockedUsersRepository } from './blocked-users.repository.js';
import {
  toBlockedUserView,
  type BlockedUserView,
  type BlockUsersResultView,
  type UnblockedUserView,
} from './user-views.js';

export const PHONE_NUMBER_NOT_FOUND = 'Phone number not found';
export const BLOCKED_USER_NOT_FOUND = 'Blocked user not found';

/**
 * Blocking users on a phone number: Meta's `POST|DELETE /{phone-number-id}/block_users`, then the outcome stored
 * (`blocked_users`), so a send to a blocked user is refused before any upstream call. Only what Meta confirmed is
 * stored; Meta's refusals (e.g. only users who wrote in the last 24 h can be blocked) are answered with its reason.
 */
@Injectable()
export class BlockedUsersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: BusinessAccountsRepository,
    private readonly numbers: PhoneNumbersRepository,
    private readonly blocked: BlockedUsersRepository,
    private readonly credentials: AccountCredentials,
    private readonly upstream: WhatsAppClient,
    private readonly audit: AuditService,
  ) {}

  /** Blocks `users`; 422 naming `users.<i>` when Meta refused every one of them, else who was blocked and who not. */
  async block(
    operator: ConsoleScope,
    wabaId: string,
    phoneNumberId: string,
    users: string[],
  ): Promise<BlockUsersResultView> {
    const { account, token } = await this.numberOf(operator, wabaId, phoneNumberId);
    const unique = [...new Set(users)];
    const outcomes = await this.upstream
      .blockUsers(token, phoneNumberId, unique)
      .catch(asDomainFailure({ during: 'block users' }));
    const added = outcomes.filter((o) => o.error === null).map((o) => ({ user: o.input, waId: o.waId }));
    const failed = outcomes.flatMap((o) =>
      o.error ? [{ user: o.input, code: o.error.code, message: o.error.message }] : [],
    );
    if (added.length === 0) {
      throw new InvalidInput(
        failed.map((f) => ({
          field: `users.${unique.indexOf(f.user)}`,
          message: `${f.user} was not blocked: ${f.message}${f.code !== null ? ` (${f.code})` : ''}`,
        })),
      );
    }
    await this.uow.run(async () => {
      await this.blocked.add(account.id, phoneNumberId, added, operator.operatorId);
      await this.audit.record(
        operator,
        'blocked_users.blocked',
        { type: 'phone_number', id: phoneNumberId },
        { users: added.map((a) => a.user), failed: failed.map((f) => f.user) },
      );
    });
    const now = new Date();
    return {
      blocked: added.map((a) =>
        toBlockedUserView({
          phoneNumberId,
          user: a.user,
          waId: a.waId,
          blockedById: operator.operatorId,
          createdAt: now,
        }),
      ),
      failed,
    };
  }

  /** Unblocks `user` (as blocked, or by its wa_id). 404 when it is blocked neither here nor upstream. */
  async unblock(
    operator: ConsoleScope,
    wabaId: string,
    phoneNumberId: string,
    user: string,
  ): Promise<UnblockedUserView> {
    const { account, token } = await this.numberOf(operator, wabaId, phoneNumberId);
    const [outcome] = await this.upstream
      .unblockUsers(token, phoneNumberId, [user])
      .catch(asDomainFailure({ during: 'unblock user' }));
    const removed = await this.uow.run(async () => {
      const count = await this.blocked.remove(account.id, phoneNumberId, user);
      if (count > 0 || outcome?.error === null)
        await this.audit.record(
          operator,
          'blocked_users.unblocked',
          { type: 'phone_number', id: phoneNumberId },
          { user },
        );
      return count;
    });
    if (removed === 0 && outcome?.error !== null) throw new NotFound(BLOCKED_USER_NOT_FOUND);
    return { user, unblocked: true };
  }

  /** The number's blocked users (a number synced once, even if removed since: its blocks are still its history). */
  async list(
    operator: ConsoleScope,
    wabaId: string,
    phoneNumberId: string,
    page: { page: number; limit: number },
  ): Promise<Page<BlockedUserView>> {
    const account = await this.accounts.getOwned(operator.organizationId, wabaId);
    if (!(await this.numbers.sendState(account.id, phoneNumberId))) throw new NotFound(PHONE_NUMBER_NOT_FOUND);
    const { rows, total } = await this.blocked.page(account.id, phoneNumberId, page);
    // A block made before a takeover still holds (Meta keeps it), but who made it is the previous holder's operator,
    // not the new holder's to see (audit 3, finding 6).
    const { heldSince } = account;
    const ours = (b: (typeof rows)[number]) => (heldSince && b.createdAt < heldSince ? { ...b, blockedById: null } : b);
    return toPage(
      rows.map((b) => toBlockedUserView(ours(b))),
      total,
      page,
    );
  }

  /** The organization's connected account and one of its synced numbers (404 otherwise), with the account's token. */
  private async numberOf(operator: ConsoleScope, wabaId: string, phoneNumberId: string) {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const number = await this.numbers.sendState(account.id, phoneNumberId);
    if (!number || number.removedAt) throw new NotFound(PHONE_NUMBER_NOT_FOUND);
    return { account, token: this.credentials.open(account) };
  }
}
