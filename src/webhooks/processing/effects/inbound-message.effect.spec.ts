import { opensWindow } from './call.effect.js';
import { userIdChangesOf } from './inbound-message.effect.js';

describe('userIdChangesOf', () => {
  const system = (s: Record<string, unknown>, from = '447700900123') => ({
    wabaId: '310900000000001',
    recipient: from,
    raw: { from, type: 'system', system: s },
  });

  it('user_changed_user_id: the previous user id (and parent id) to the new one', () => {
    expect(
      userIdChangesOf(
        system({
          type: 'user_changed_user_id',
          user_id: 'US.2',
          previous_user_id: 'US.1',
          parent_user_id: 'US.ENT.2',
          previous_parent_user_id: 'US.ENT.1',
        }),
      ),
    ).toEqual([
      { wabaId: '310900000000001', previous: 'US.1', next: 'US.2' },
      { wabaId: '310900000000001', previous: 'US.ENT.1', next: 'US.ENT.2' },
    ]);
  });

  it('user_changed_number: the old number to the new one, and the previous user id to the regenerated one', () => {
    expect(
      userIdChangesOf(
        system({ type: 'user_changed_number', wa_id: '447700900999', user_id: 'US.9', previous_user_id: 'US.1' }),
      ),
    ).toEqual([
      { wabaId: '310900000000001', previous: 'US.1', next: 'US.9' },
      { wabaId: '310900000000001', previous: '447700900123', next: '447700900999' },
    ]);
  });

  it('changes nothing for other messages, other system types, or a change without its new address', () => {
    expect(userIdChangesOf({ wabaId: 'w', recipient: '1', raw: { type: 'text', text: { body: 'x' } } })).toEqual([]);
    expect(
      userIdChangesOf(system({ type: 'customer_identity_changed', user_id: 'US.2', previous_user_id: 'US.1' })),
    ).toEqual([]);
    expect(userIdChangesOf(system({ type: 'user_changed_user_id', previous_user_id: 'US.1' }))).toEqual([]);
    expect(userIdChangesOf({ wabaId: 'w', recipient: null, raw: { type: 'system', system: 'oops' } })).toEqual([]);
  });
});

describe('opensWindow (calls)', () => {
  const call = (raw: Record<string, unknown>) => ({ kind: 'call', phoneNumberId: '402000000000011', raw });

  it('a user-initiated call event opens the window; a business-initiated call or a call status does not', () => {
    expect(opensWindow(call({ direction: 'USER_INITIATED', event: 'connect' }))).toBe(true);
    expect(opensWindow(call({ direction: 'USER_INITIATED', event: 'terminate' }))).toBe(true);
    expect(opensWindow(call({ direction: 'BUSINESS_INITIATED', event: 'connect' }))).toBe(false);
    expect(opensWindow(call({ status: 'RINGING' }))).toBe(false);
    expect(opensWindow({ ...call({ direction: 'USER_INITIATED', event: 'connect' }), phoneNumberId: null })).toBe(
      false,
    );
  });
});
