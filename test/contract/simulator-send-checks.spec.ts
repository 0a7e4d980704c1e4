import { plainToInstance } from 'class-transformer';
import { SendMessageDto } from '../../src/messages/dto/send-message.dto.js';
import { MESSAGE_TYPE_CATALOGUE, MESSAGE_TYPES, messageType } from '../../src/messages/types/catalogue.js';
import { CONTENT_CHECKS } from '../../simulator/content-checks.js';
import { defaultFixture } from '../../simulator/fixture.js';
import { checkSend } from '../../simulator/send-validation.js';

/**
 * The simulator stands in for Meta and keeps Meta's checks of a send on its own side (simulator/content-checks.ts),
 * not taken from the API's message-type catalogue (src/messages/types/). This is where the two meet: the simulator
 * checks every type the API sends, and nothing else, and every example the API documents passes its check.
 */
const account = defaultFixture().accounts[0]!;
const phone = account.phoneNumbers.find((p) => p.status === 'CONNECTED')!;
const sender = { phoneNumberId: phone.id, to: '447700900123' };
const examples = MESSAGE_TYPE_CATALOGUE.flatMap((d) =>
  Object.entries<{ value: object }>(d.examples).map(([name, { value }]) => [d.type, name, value] as const),
);

/** Meta's send body for a type's upstream part, as the client puts it together (whatsapp.client.ts). */
function metaBody(part: {
  type: string;
  content?: unknown;
  text?: unknown;
  template?: unknown;
}): Record<string, unknown> {
  const common = { messaging_product: 'whatsapp', recipient_type: 'individual', to: `+${sender.to}` };
  const { type, content, ...own } = part;
  return content === undefined ? { ...common, type, ...own } : { ...common, type, [type]: content };
}

describe('the simulator’s send checks against the message-type catalogue', () => {
  it('checks the content of exactly the catalogue’s types (templates against its stored templates)', () => {
    expect(Object.keys(CONTENT_CHECKS).sort()).toEqual(MESSAGE_TYPES.filter((t) => t !== 'template').sort());
  });

  it.each(examples)('passes the catalogue’s %s example %s as Meta would', (type, _name, value) => {
    const part = messageType(type).upstream(plainToInstance(SendMessageDto, { ...sender, ...value }));
    const checked = checkSend(metaBody(part), account, phone, () => true);
    expect(checked.ok ? 'accepted' : checked.error.body.error).toBe('accepted');
  });
});
