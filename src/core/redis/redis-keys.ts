import type { AppConfig } from '../config/app-config.js';

/** What the key names depend on: the namespace, and whether Redis is a cluster. */
export type KeySpace = Pick<AppConfig, 'queuePrefix' | 'redisCluster'>;

/**
 * BullMQ's prefix. One Redis: QUEUE_PREFIX as it always was (an upgrade finds its queued jobs). A Redis Cluster:
 * `{QUEUE_PREFIX}`, one hash tag for every queue, so each of BullMQ's Lua scripts (which touch a queue's wait, active,
 * delayed lists and its jobs together, and a job moved between queues) runs on one slot. Every queue then lives on
 * the master that owns that slot: queue throughput is one master's, the rest of the cluster carries the other keys.
 */
export function queueKeyPrefix(space: KeySpace): string {
  return space.redisCluster ? `{${space.queuePrefix}}` : space.queuePrefix;
}

/**
 * A key that a Lua script or a transaction touches together with others of the same `group`. One Redis:
 * `<QUEUE_PREFIX>:<name>`, the names of earlier releases unchanged. A Redis Cluster: `<QUEUE_PREFIX>:{<group>}:<name>`,
 * so every key of one group hashes to one slot (Redis hashes only what is between the first `{` and the next `}`:
 * QUEUE_PREFIX has no braces, so `name`, which may hold user input, never changes the slot). Keys used alone need no
 * group; they keep `<QUEUE_PREFIX>:<name>` everywhere.
 */
export function groupedKey(space: KeySpace, group: string, name: string): string {
  if (!space.redisCluster) return `${space.queuePrefix}:${name}`;
  if (/[{}]/.test(group)) throw new Error(`a key group cannot hold braces: ${group}`);
  return `${space.queuePrefix}:{${group}}:${name}`;
}
