import type { RedisClient } from './redis-connection.js';

/**
 * A Lua script taking a varying number of keys, called with its keys first. It is defined once per key count (up to
 * `maxKeys`), each with its number of keys fixed, because ioredis's auto-pipelining groups a command by its first
 * argument: on a Redis Cluster, a script called as `(numberOfKeys, ...keys)` was grouped by the slot of the number,
 * joined the pipeline of another master in a burst, and ioredis refused that whole pipeline ("All keys in the pipeline
 * should belong to the same slots allocation group"), the other commands in it included.
 */
export class KeyedScript<T> {
  constructor(
    private readonly client: RedisClient,
    private readonly name: string,
    lua: string,
    private readonly maxKeys: number,
  ) {
    for (let n = 1; n <= maxKeys; n++) client.defineCommand(this.commandFor(n), { numberOfKeys: n, lua });
  }

  run(keys: readonly string[], args: ReadonlyArray<string | number>): Promise<T> {
    if (keys.length < 1 || keys.length > this.maxKeys)
      throw new RangeError(`${this.name} takes 1 to ${this.maxKeys} keys, not ${keys.length}`);
    const commands = this.client as unknown as Record<string, (...a: Array<string | number>) => Promise<T>>;
    return commands[this.commandFor(keys.length)]!(...keys, ...args);
  }

  private commandFor(keyCount: number): string {
    return `${this.name}${keyCount}`;
  }
}
