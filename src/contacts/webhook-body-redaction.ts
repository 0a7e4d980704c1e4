/** What erasing a contact does to one raw webhook body. */
export type BodyRedaction =
  | { kind: 'unchanged' }
  /** Other users' items stay; the contact's are gone (`removed` items). */
  | { kind: 'rewritten'; body: Buffer; removed: number }
  /** Everything in it was the contact's (or it cannot be read as Meta's JSON): the delivery goes. */
  | { kind: 'deleted'; removed: number };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isRecord = (v: Json | undefined): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A webhook body without the items of a contact: Meta batches several users' statuses and messages in one POST
 * (`entry[].changes[].value.{messages,statuses,contacts,…}[]`). Every array item that names one of `addresses`
 * anywhere (its `from`, `recipient_id`, `wa_id`, `user_id`, or a text quoting the number) goes; a change left with no
 * item goes, and an entry left with no change; a body left with no entry is deleted. A change that still names the
 * contact outside any item goes whole. The rest keeps its order and values (re-serialised: the bytes differ from
 * Meta's, so the stored signature no longer verifies them; the delivery is marked redacted).
 */
export function redactContact(raw: Buffer, addresses: string[]): BodyRedaction {
  const text = raw.toString('utf8');
  const names = (s: string) => addresses.some((a) => s.includes(a));
  if (!names(text)) return { kind: 'unchanged' };
  let body: Json;
  try {
    body = JSON.parse(text) as Json;
  } catch {
    return { kind: 'deleted', removed: 1 };
  }
  const mentions = (v: Json) => names(JSON.stringify(v));
  if (!isRecord(body) || !Array.isArray(body.entry)) return { kind: 'deleted', removed: 1 };
  let removed = 0;
  const entries: Json[] = [];
  for (const entry of body.entry) {
    if (!isRecord(entry) || !Array.isArray(entry.changes)) {
      if (mentions(entry)) removed += 1;
      else entries.push(entry);
      continue;
    }
    const changes: Json[] = [];
    for (const change of entry.changes) {
      if (!mentions(change)) {
        changes.push(change);
        continue;
      }
      const value = isRecord(change) ? change.value : undefined;
      if (!isRecord(change) || !isRecord(value)) {
        removed += 1;
        continue;
      }
      const kept: { [key: string]: Json } = {};
      let itemsLeft = 0;
      for (const [key, v] of Object.entries(value)) {
        if (Array.isArray(v)) {
          const items = v.filter((item) => !mentions(item));
          removed += v.length - items.length;
          itemsLeft += items.length;
          kept[key] = items;
        } else {
          kept[key] = v;
        }
      }
      const rewritten: Json = { ...change, value: kept };
      if (itemsLeft === 0 || mentions(rewritten)) continue;
      changes.push(rewritten);
    }
    if (changes.length > 0 && !mentions({ ...entry, changes: [] })) entries.push({ ...entry, changes });
  }
  if (entries.length === 0) return { kind: 'deleted', removed: Math.max(removed, 1) };
  const rewritten = JSON.stringify({ ...body, entry: entries });
  if (names(rewritten)) return { kind: 'deleted', removed: Math.max(removed, 1) };
  return { kind: 'rewritten', body: Buffer.from(rewritten, 'utf8'), removed };
}
