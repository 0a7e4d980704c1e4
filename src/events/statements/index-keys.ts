// The keys of `events`' indexes on expressions (migration 20261205120000_lean_account_indexes; docs/storage.md, "The
// account's key in the indexes"):
// - the per-account indexes lead with `hashtextextended(waba_id, 0)`, a 64-bit hash of the WABA id, and hold one more
//   column (created_at, xid): entries of two 8-byte keys, which PostgreSQL packs as an account appends to its range
//   (the 15-digit text with two more columns made entries it split in the middle, half full);
// - a message's events are found by `hashtextextended(message_id, 0)` (8 bytes where the wamid is about 60);
// - the dedupe key's index holds the key's 16 bytes as a uuid.
// A statement matches an index on an expression only when it names the same expression: these builders are the one
// place that writes them.
import { bytesAsUuid, equalsByHash, inByHash } from '../../core/db/pg.js';

/**
 * The rows of one business account: its key (what the per-account indexes are searched by), then its id.
 * `wabaId`: a value or a statement's parameter; `table`: the alias `events` is read under.
 */
export const ofAccount = (wabaId: unknown, table = 'events') => equalsByHash(`${table}.waba_id`, wabaId);

/** The events of one message (its wamid; a value or a parameter). */
export const ofMessage = (wamid: unknown) => equalsByHash('events.message_id', wamid);

/** The events of any of these messages (wamids: values). */
export const ofMessages = (wamids: string[]) => inByHash('events.message_id', wamids);

/** The dedupe key as its index holds it (its 16 bytes as a uuid), in the table read as `table`. */
export const dedupeKeyOf = (table: string) => bytesAsUuid(`${table}.dedupe_key`);

/** Dedupe keys as the probe takes them (a uuid[] parameter): their 16 bytes as 32 hex digits. */
export const dedupeUuids = (keys: Buffer[]) => keys.map((k) => k.toString('hex'));
