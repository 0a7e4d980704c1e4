import { TemplatesRepository, type TemplateDecision } from '../../src/accounts/templates/templates.repository.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import { repositoryUnderTest, insertBusinessAccount, insertOrganization, syncedTemplate } from '../utils/factories.js';

describe('TemplatesRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new TemplatesRepository(db));
  /** Every matching template: one page as large as a page may be. */
  const list = async (businessAccountId: string, filter: { name?: string; status?: string } = {}) =>
    (await t.repo.page(businessAccountId, { page: 1, limit: 100, ...filter })).rows;

  it('keys templates by name and language, marks unlisted ones removed, and touches no other account', async () => {
    const org = await insertOrganization(t.db);
    const [account, other] = [
      await insertBusinessAccount(t.db, org.organizationId),
      await insertBusinessAccount(t.db, org.organizationId),
    ];
    const hello = syncedTemplate({ name: 'hello' });
    const helloFr = syncedTemplate({ name: 'hello', language: 'fr_FR', status: 'PENDING' });
    const promo = syncedTemplate({ name: 'promo' });
    await t.repo.replaceAll(other.id, [hello], new Date(), new Date());

    const readAt = new Date('2026-03-01T10:00:00.000Z');
    expect(await t.repo.replaceAll(account.id, [hello, helloFr, promo], new Date(), readAt)).toEqual({
      added: 3,
      updated: 0,
      removed: 0,
    });
    expect(
      await t.repo.replaceAll(account.id, [{ ...helloFr, status: 'APPROVED' }, hello], new Date(), readAt),
    ).toEqual({ added: 0, updated: 2, removed: 1 });

    const rows = await list(account.id);
    expect(rows.map((t) => [t.name, t.language, t.status, t.removedAt !== null])).toEqual([
      ['hello', 'en_US', 'APPROVED', false],
      ['hello', 'fr_FR', 'APPROVED', false],
      ['promo', 'en_US', 'APPROVED', true],
    ]);
    expect(rows[0]).toMatchObject({
      statusUpdatedAt: readAt,
      parameterCounts: hello.parameterCounts,
      components: hello.components,
    });
    expect((await list(account.id, { name: 'hello', status: 'APPROVED' })).length).toBe(2);
    expect((await list(other.id)).map((t) => [t.name, t.removedAt])).toEqual([['hello', null]]);
    const page = await t.repo.page(account.id, { page: 2, limit: 2 });
    expect({ names: page.rows.map((row) => `${row.name}/${row.language}`), total: page.total }).toEqual({
      names: ['promo/en_US'],
      total: 3,
    });
  });

  describe("the send path's reads", () => {
    it("answers a send with the template's state in that language and account only", async () => {
      const org = await insertOrganization(t.db);
      const [account, other] = [
        await insertBusinessAccount(t.db, org.organizationId),
        await insertBusinessAccount(t.db, org.organizationId),
      ];
      const named = syncedTemplate({
        name: 'order_ready',
        parameterFormat: 'NAMED',
        parameterCounts: { header: 0, body: 2, buttons: { 0: 1 }, names: { header: [], body: ['customer', 'order'] } },
      });
      const paused = { ...named, language: 'de_DE', status: 'PAUSED' };
      const promo = syncedTemplate({ name: 'promo', category: 'MARKETING' });
      const login = syncedTemplate({
        name: 'login_code',
        category: 'AUTHENTICATION',
        components: [
          { type: 'BODY', text: '{{1}} is your code.' },
          { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'ONE_TAP', text: 'Autofill' }] },
        ],
      });
      await t.repo.replaceAll(account.id, [named, paused, promo, login], new Date(), new Date());
      await t.repo.replaceAll(other.id, [{ ...named, language: 'fr_FR' }], new Date(), new Date());

      expect(await t.repo.sendState(account.id, 'order_ready', 'en_US')).toEqual({
        status: 'APPROVED',
        removedAt: null,
        parameterFormat: 'NAMED',
        parameterCounts: named.parameterCounts,
        category: named.category,
        otpType: null,
      });
      // What the send path needs for marketing stops, the Marketing Messages API and sends to user ids.
      expect(await t.repo.sendState(account.id, 'promo', 'en_US')).toMatchObject({
        category: 'MARKETING',
        otpType: null,
      });
      expect(await t.repo.sendState(account.id, 'login_code', 'en_US')).toMatchObject({
        category: 'AUTHENTICATION',
        otpType: 'ONE_TAP',
      });
      expect(await t.repo.sendState(account.id, 'order_ready', 'de_DE')).toMatchObject({
        status: 'PAUSED',
        removedAt: null,
      });
      expect(await t.repo.sendState(account.id, 'order_ready', 'fr_FR')).toBeNull();
      expect(await t.repo.sendState(other.id, 'order_ready', 'en_US')).toBeNull();

      const removedAt = new Date('2026-03-01T10:00:00.000Z');
      await t.repo.replaceAll(account.id, [paused, promo], removedAt, removedAt);
      expect(await t.repo.sendState(account.id, 'order_ready', 'en_US')).toMatchObject({
        status: 'APPROVED',
        removedAt,
      });
    });

    it('lists the languages a template is synced in, sorted, without removed ones or other accounts', async () => {
      const org = await insertOrganization(t.db);
      const [account, other] = [
        await insertBusinessAccount(t.db, org.organizationId),
        await insertBusinessAccount(t.db, org.organizationId),
      ];
      const hello = syncedTemplate({ name: 'hello' });
      const [fr, de, es] = ['fr_FR', 'de_DE', 'es_ES'].map((language) => ({ ...hello, language }));
      await t.repo.replaceAll(
        account.id,
        [fr!, hello, de!, syncedTemplate({ name: 'hello_v2', language: 'it_IT' })],
        new Date(),
        new Date(),
      );
      await t.repo.replaceAll(other.id, [es!], new Date(), new Date());

      expect(await t.repo.languagesOf(account.id, 'hello')).toEqual(['de_DE', 'en_US', 'fr_FR']);
      await t.repo.replaceAll(account.id, [fr!, hello], new Date(), new Date());
      expect(await t.repo.languagesOf(account.id, 'hello')).toEqual(['en_US', 'fr_FR']);
      expect(await t.repo.languagesOf(other.id, 'hello')).toEqual(['es_ES']);
      expect(await t.repo.languagesOf(account.id, 'hell')).toEqual([]);
    });
  });

  describe("applyDecisions (Meta's template webhooks)", () => {
    const readAt = new Date('2026-03-01T10:00:00.000Z');
    const minutesAfterRead = (m: number) => new Date(readAt.getTime() + m * 60_000);
    const apply = (decisions: TemplateDecision[]) =>
      new UnitOfWork(t.db).run((tx) => t.repo.applyDecisions(tx, decisions));
    /** An account of a fresh organization with these templates synced at `readAt`. */
    async function syncedAccount(...templates: ReturnType<typeof syncedTemplate>[]) {
      const org = await insertOrganization(t.db);
      const account = await insertBusinessAccount(t.db, org.organizationId);
      await t.repo.replaceAll(account.id, templates, readAt, readAt);
      return account;
    }
    const stateOf = async (businessAccountId: string) =>
      (await list(businessAccountId)).map((row) => [
        row.name,
        row.language,
        row.status,
        row.statusReason,
        row.category,
        row.statusUpdatedAt,
      ]);

    it('applies a decision to the template of that account, name and language only', async () => {
      const hello = syncedTemplate({ name: 'hello' });
      const account = await syncedAccount(hello, { ...hello, language: 'fr_FR' }, syncedTemplate({ name: 'promo' }));
      const other = await syncedAccount(hello);
      const before = await stateOf(account.id);

      const at = minutesAfterRead(5);
      await apply([
        { wabaId: account.wabaId, name: 'hello', language: 'en_US', at, status: 'REJECTED', reason: 'INVALID_FORMAT' },
        // Never synced: nothing to update, nothing created.
        { wabaId: account.wabaId, name: 'unknown', language: 'en_US', at, status: 'APPROVED' },
      ]);
      expect(await stateOf(account.id)).toEqual([
        ['hello', 'en_US', 'REJECTED', 'INVALID_FORMAT', 'UTILITY', at],
        before[1],
        before[2],
      ]);
      expect(await stateOf(other.id)).toEqual([['hello', 'en_US', 'APPROVED', null, 'UTILITY', readAt]]);
    });

    it('ignores a decision older than the stored status, and applies the decisions of one call oldest first', async () => {
      const account = await syncedAccount(syncedTemplate({ name: 'hello' }));
      const decision = { wabaId: account.wabaId, name: 'hello', language: 'en_US' };

      // Decided before the sync read APPROVED: a late redelivery.
      await apply([{ ...decision, at: minutesAfterRead(-1), status: 'PAUSED', reason: 'LOW_QUALITY' }]);
      expect(await stateOf(account.id)).toEqual([['hello', 'en_US', 'APPROVED', null, 'UTILITY', readAt]]);

      await apply([
        { ...decision, at: minutesAfterRead(20), status: 'APPROVED' },
        { ...decision, at: minutesAfterRead(10), status: 'PAUSED', reason: 'LOW_QUALITY' },
      ]);
      expect(await stateOf(account.id)).toEqual([
        ['hello', 'en_US', 'APPROVED', null, 'UTILITY', minutesAfterRead(20)],
      ]);
      await apply([{ ...decision, at: minutesAfterRead(15), status: 'DISABLED' }]);
      expect(await stateOf(account.id)).toEqual([
        ['hello', 'en_US', 'APPROVED', null, 'UTILITY', minutesAfterRead(20)],
      ]);
    });

    it("changes a template's category, keeping its status", async () => {
      const account = await syncedAccount(syncedTemplate({ name: 'hello', status: 'PAUSED' }));
      const other = await syncedAccount(syncedTemplate({ name: 'hello' }));
      await apply([
        { wabaId: account.wabaId, name: 'hello', language: 'en_US', at: minutesAfterRead(1), category: 'MARKETING' },
      ]);
      expect(await stateOf(account.id)).toEqual([['hello', 'en_US', 'PAUSED', null, 'MARKETING', readAt]]);
      expect(await stateOf(other.id)).toEqual([['hello', 'en_US', 'APPROVED', null, 'UTILITY', readAt]]);
    });

    it('ignores a category decision older than the one already applied', async () => {
      const account = await syncedAccount(syncedTemplate({ name: 'hello' }));
      const decision = { wabaId: account.wabaId, name: 'hello', language: 'en_US' };
      // Meta moved the template to MARKETING at +10 min and back to UTILITY at +20; the deliveries arrive in reverse.
      await apply([{ ...decision, at: minutesAfterRead(20), category: 'UTILITY' }]);
      await apply([{ ...decision, at: minutesAfterRead(10), category: 'MARKETING' }]);
      expect((await list(account.id)).map((row) => row.category)).toEqual(['UTILITY']);
    });
  });
});
