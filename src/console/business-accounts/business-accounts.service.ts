import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { ApiError, FieldValidationError } from '../../core/http/api-error.js';
import { PrismaService } from '../../core/prisma/prisma.service.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { UpstreamError } from '../../upstream/upstream.error.js';
import { WhatsAppClient } from '../../upstream/whatsapp.client.js';
import { AuditService } from '../audit/audit.service.js';
import { BusinessAccountsRepository } from './business-accounts.repository.js';
import type { ConnectBusinessAccountDto } from './dto/connect-business-account.dto.js';
import { toBusinessAccountView, type BusinessAccountView } from './dto/business-account.view.js';

export const ALREADY_CONNECTED = 'This business account is already connected';

@Injectable()
export class BusinessAccountsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly repository: BusinessAccountsRepository,
    private readonly upstream: WhatsAppClient,
    private readonly secrets: SecretBox,
    private readonly audit: AuditService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /**
   * Connects a WABA: the credential is checked against the upstream platform first, then stored encrypted.
   * A WABA belongs to one organization; the same organization may reconnect one it disconnected.
   */
  async connect(operator: ConsoleScope, dto: ConnectBusinessAccountDto): Promise<BusinessAccountView> {
    const existing = await this.prisma.businessAccount.findUnique({ where: { wabaId: dto.wabaId } });
    if (existing && (existing.organizationId !== operator.organizationId || !existing.disconnectedAt)) {
      throw new ApiError(409, ALREADY_CONNECTED, { errors: [{ field: 'wabaId', message: 'wabaId is already connected' }] });
    }
    const upstreamAccount = await this.verifyCredential(dto);
    const name = dto.name ?? upstreamAccount.name ?? dto.wabaId;
    const accessTokenEncrypted = this.secrets.encrypt(dto.accessToken);
    try {
      const account = await this.prisma.$transaction(async (tx) => {
        const saved = existing
          ? await tx.businessAccount.update({ where: { id: existing.id }, data: { name, accessTokenEncrypted, disconnectedAt: null } })
          : await tx.businessAccount.create({ data: { organizationId: operator.organizationId, wabaId: dto.wabaId, name, accessTokenEncrypted } });
        await this.audit.record(tx, operator, existing ? 'business_account.reconnected' : 'business_account.connected', { type: 'business_account', id: dto.wabaId }, { name });
        return saved;
      });
      return toBusinessAccountView(account);
    } catch (error) {
      // Two operators connecting the same WABA at once: the unique index decides, the loser gets 409.
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
        throw new ApiError(409, ALREADY_CONNECTED, { errors: [{ field: 'wabaId', message: 'wabaId is already connected' }] });
      }
      throw error;
    }
  }

  /** Replaces the stored token of a connected account (after the upstream rejected the old one: 424). */
  async reconnect(operator: ConsoleScope, wabaId: string, accessToken: string): Promise<BusinessAccountView> {
    const account = await this.repository.getOwned(operator.organizationId, wabaId);
    await this.verifyCredential({ wabaId, accessToken });
    const updated = await this.prisma.$transaction(async (tx) => {
      await this.audit.record(tx, operator, 'business_account.reconnected', { type: 'business_account', id: wabaId }, { tokenReplaced: true });
      return tx.businessAccount.update({ where: { id: account.id }, data: { accessTokenEncrypted: this.secrets.encrypt(accessToken), disconnectedAt: null } });
    });
    return toBusinessAccountView(updated);
  }

  async list(organizationId: string): Promise<BusinessAccountView[]> {
    return (await this.repository.list(organizationId)).map(toBusinessAccountView);
  }

  async get(organizationId: string, wabaId: string): Promise<BusinessAccountView> {
    return toBusinessAccountView(await this.repository.getOwned(organizationId, wabaId));
  }

  /** Disconnects: revokes every key of the account; messages, events and templates stay as history. */
  async disconnect(operator: ConsoleScope, wabaId: string): Promise<BusinessAccountView> {
    const account = await this.repository.getConnected(operator.organizationId, wabaId);
    const updated = await this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const keys = await tx.apiKey.findMany({ where: { businessAccountId: account.id, revokedAt: null }, select: { accessKey: true } });
      const revoked = await tx.apiKey.updateMany({ where: { businessAccountId: account.id, revokedAt: null }, data: { revokedAt: now } });
      // Refused at once by this process; the others follow within API_KEY_CACHE_TTL_MS.
      for (const key of keys) this.authenticator.invalidate(key.accessKey);
      await this.audit.record(tx, operator, 'business_account.disconnected', { type: 'business_account', id: wabaId }, { revokedKeys: revoked.count });
      return tx.businessAccount.update({ where: { id: account.id }, data: { disconnectedAt: now } });
    });
    return toBusinessAccountView(updated);
  }

  private async verifyCredential(dto: { wabaId: string; accessToken: string }): Promise<{ id: string; name?: string }> {
    try {
      return await this.upstream.getBusinessAccount(dto.accessToken, dto.wabaId);
    } catch (error) {
      if (error instanceof UpstreamError && (error.errorClass === 'credential' || error.errorClass === 'account_blocked')) {
        throw FieldValidationError.of('accessToken', `The upstream platform rejected this access token: ${error.title}${error.code !== undefined ? ` (${error.code})` : ''}`);
      }
      if (error instanceof UpstreamError && error.errorClass === 'permanent') {
        throw FieldValidationError.of('wabaId', `The upstream platform does not know this business account for this token: ${error.title}${error.code !== undefined ? ` (${error.code})` : ''}`);
      }
      if (error instanceof UpstreamError) throw new ApiError(502, `Upstream platform unavailable: ${error.title}`);
      throw error;
    }
  }
}
