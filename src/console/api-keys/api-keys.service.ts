import { Injectable } from '@nestjs/common';
import type { ConsoleScope } from '../../auth/request-scope.js';
import { ApiKeyAuthenticator } from '../../auth/api-keys/api-key.authenticator.js';
import { ApiKeysRepository, type ApiKeyRow } from '../../auth/api-keys/api-keys.repository.js';
import { AuditService } from '../../audit/audit.service.js';
import { BusinessAccountsRepository } from '../../accounts/business-accounts/business-accounts.repository.js';
import { randomToken, sha256Hex } from '../../core/crypto/tokens.js';
import { AppConfig } from '../../core/config/app-config.js';
import { Conflict, NotFound } from '../../core/errors/domain-errors.js';
import { toPage, type Page } from '../../core/rows/page.js';
import { UnitOfWork } from '../../core/db/unit-of-work.js';
import { OperatorsRepository } from '../operators/operators.repository.js';
import type { ApiKeyView, CreatedApiKeyView } from './dto/api-key.view.js';

export const API_KEY_NOT_FOUND = 'API key not found';
const KEY_BYTES = 24;

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: ApiKeysRepository,
    private readonly accounts: BusinessAccountsRepository,
    private readonly audit: AuditService,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly operators: OperatorsRepository,
    private readonly config: AppConfig,
  ) {}

  /** Issues a pair; the secret exists only in this response (we keep its SHA-256). */
  async create(operator: ConsoleScope, wabaId: string, name: string): Promise<CreatedApiKeyView> {
    const account = await this.accounts.getConnected(operator.organizationId, wabaId);
    const accessKey = randomToken(KEY_BYTES, 'ak_');
    const secretKey = randomToken(KEY_BYTES, 'sk_');
    const key = await this.uow.run(async () => {
      // More pairs must not mean more throughput or more secrets to leak: the account's bucket is shared anyway.
      if ((await this.keys.countActiveLocked(account.id)) >= this.config.apiKeysMaxPerAccount) {
        throw new Conflict(
          `At most ${this.config.apiKeysMaxPerAccount} active key pairs per business account (API_KEYS_MAX_PER_ACCOUNT); revoke one first`,
        );
      }
      const created = await this.keys.create(operator.organizationId, {
        businessAccountId: account.id,
        name: name.trim(),
        accessKey,
        secretHash: sha256Hex(secretKey),
        createdById: operator.operatorId,
      });
      await this.audit.record(
        operator,
        'api_key.created',
        { type: 'api_key', id: created.id },
        { name: created.name, wabaId, accessKey },
      );
      return created;
    });
    return { id: key.id, name: key.name, wabaId, accessKey, secretKey, createdAt: key.createdAt.toISOString() };
  }

  async list(
    organizationId: string,
    query: { page: number; limit: number; wabaId?: string },
  ): Promise<Page<ApiKeyView>> {
    const { rows, total } = await this.keys.page(organizationId, query);
    const issuers = await this.operators.emailsOf(organizationId, [
      ...new Set(rows.flatMap((k) => (k.createdById ? [k.createdById] : []))),
    ]);
    return toPage(
      rows.map((k) => toView(k, issuers)),
      total,
      query,
    );
  }

  /** Revokes a pair: refused from its next request on (every API process within API_KEY_CACHE_TTL_MS). */
  async revoke(operator: ConsoleScope, id: string): Promise<ApiKeyView> {
    const key = await this.keys.findOwned(operator.organizationId, id);
    if (!key) throw new NotFound(API_KEY_NOT_FOUND);
    const issuers = await this.operators.emailsOf(operator.organizationId, key.createdById ? [key.createdById] : []);
    if (key.revokedAt) return toView(key, issuers);
    const revoked = await this.uow.run(async () => {
      const updated = await this.keys.revoke(operator.organizationId, key.id, new Date());
      await this.audit.record(
        operator,
        'api_key.revoked',
        { type: 'api_key', id: key.id },
        { name: key.name, accessKey: key.accessKey },
      );
      return updated;
    });
    this.authenticator.invalidate(key.accessKey);
    return toView(revoked, issuers);
  }
}

function toView(k: ApiKeyRow, issuers: Map<string, string>): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    wabaId: k.businessAccount.wabaId,
    accessKey: k.accessKey,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
    createdBy: (k.createdById && issuers.get(k.createdById)) ?? null,
  };
}
