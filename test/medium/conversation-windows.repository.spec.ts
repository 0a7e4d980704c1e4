import { Db } from '../../src/core/db/db.js';
import { UnitOfWork } from '../../src/core/db/unit-of-work.js';
import {
  ConversationWindowsRepository,
  type InboundContact,
} from '../../src/messages/conversation-windows.repository.js';
import { metaId, recipient, repositoryUnderTest } from '../utils/factories.js';

describe('ConversationWindowsRepository (PostgreSQL)', () => {
  const t = repositoryUnderTest((db) => new ConversationWindowsRepository(db));
  const openOrRenew = (contacts: InboundContact[]) =>
    new UnitOfWork(t.db).run((tx) => t.repo.openOrRenew(tx, contacts));
  /** When the customer last wrote to this business number, as the send path reads it (null: no window). */
  const lastInbound = (phoneNumberId: string, customer: string) => t.repo.lastInboundAt(phoneNumberId, customer);
  const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute));

  it('opens a window on an inbound message and renews it on a later one, never shortening it for an older one', async () => {
    const contact = { phoneNumberId: metaId(), recipient: recipient(), wabaId: metaId() };
    const otherCustomer = recipient();
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toBeNull();

    await openOrRenew([{ ...contact, at: at(10) }]);
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(10));
    await openOrRenew([{ ...contact, at: at(30) }]);
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(30));
    // Meta redelivers late: the message of minute 20 arrives after the one of minute 30.
    await openOrRenew([{ ...contact, at: at(20) }]);
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(30));
    expect(await lastInbound(contact.phoneNumberId, otherCustomer)).toBeNull();
  });

  it('takes several messages of one window in one call (the latest counts) beside other windows', async () => {
    const contact = { phoneNumberId: metaId(), recipient: recipient(), wabaId: metaId() };
    const sameNumberOtherCustomer = { ...contact, recipient: recipient() };
    const otherNumber = { ...contact, phoneNumberId: metaId() };

    await openOrRenew([
      { ...contact, at: at(5) },
      { ...sameNumberOtherCustomer, at: at(1) },
      { ...contact, at: at(7) },
      { ...otherNumber, at: at(2) },
      { ...contact, at: at(6) },
    ]);
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(7));
    expect(await lastInbound(sameNumberOtherCustomer.phoneNumberId, sameNumberOtherCustomer.recipient)).toEqual(at(1));
    expect(await lastInbound(otherNumber.phoneNumberId, otherNumber.recipient)).toEqual(at(2));

    await openOrRenew([
      { ...contact, at: at(3) },
      { ...contact, at: at(4) },
    ]);
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(7));
  });

  it('answers a send at once with the committed window while a webhook chunk renewing it is still open', async () => {
    const contact = { phoneNumberId: metaId(), recipient: recipient(), wabaId: metaId() };
    await openOrRenew([{ ...contact, at: at(10) }]);
    const readDuringChunk = await new UnitOfWork(t.db).run(async (tx) => {
      await t.repo.openOrRenew(tx, [{ ...contact, at: at(40) }]);
      // The chunk holds the window's row lock: the send path (another request: Db.outside) neither waits for it nor
      // sees its uncommitted renewal.
      const waited = new Promise<string>((resolve) =>
        setTimeout(() => resolve('still waiting after 2 s'), 2000).unref(),
      );
      return Promise.race([Db.outside(() => lastInbound(contact.phoneNumberId, contact.recipient)), waited]);
    });
    expect(readDuringChunk).toEqual(at(10));
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toEqual(at(40));
  });

  it('opens nothing when the unit of work it ran in fails', async () => {
    const contact = { phoneNumberId: metaId(), recipient: recipient(), wabaId: metaId(), at: at(0) };
    await expect(
      new UnitOfWork(t.db).run(async (tx) => {
        await t.repo.openOrRenew(tx, [contact]);
        throw new Error('the event could not be stored');
      }),
    ).rejects.toThrow('could not be stored');
    expect(await lastInbound(contact.phoneNumberId, contact.recipient)).toBeNull();
  });
});
