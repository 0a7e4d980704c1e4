import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { APP_LOGGER } from '../logging/app-logger.js';

export interface ChannelSubscriber {
  /** A NOTIFY on the channel (delivered after the notifying transaction committed). */
  notify(payload: string): void;
  /**
   * Whether notifications are being received. false: the connection is down and notifications may be lost
   * until it is back; true: (re)connected and listening, anything missed meanwhile is gone.
   */
  listening(on: boolean): void;
}

const RECONNECT_MS = 1000;

/**
 * PostgreSQL LISTEN on one dedicated connection per process (outside the pool: a listening connection must
 * stay checked out). Connects on the first subscription, reconnects after a second when the connection is
 * lost, and tells subscribers when they cannot trust that they heard everything.
 */
@Injectable()
export class PgListener implements OnModuleDestroy {
  private readonly subscribers = new Map<string, ChannelSubscriber[]>();
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A connect() is under way: it will LISTEN on every channel subscribed by the time it is connected. */
  private connecting = false;

  constructor(
    private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {}

  subscribe(channel: string, subscriber: ChannelSubscriber): void {
    const list = this.subscribers.get(channel) ?? [];
    list.push(subscriber);
    this.subscribers.set(channel, list);
    const client = this.client;
    // A failed LISTEN ends the connection; its 'end' handler reconnects and listens on every channel.
    if (client) this.listenOn(client, [channel]).catch(() => client.end().catch(() => undefined));
    else if (!this.timer && !this.connecting) void this.connect();
  }

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    const client = new pg.Client({
      // LISTEN is session state: on PostgreSQL itself, never through a transaction pooler.
      connectionString: this.config.databaseDirectUrl,
      connectionTimeoutMillis: 3000,
      keepAlive: true,
    });
    client.on('notification', (n) => {
      for (const s of this.subscribers.get(n.channel) ?? []) s.notify(n.payload ?? '');
    });
    const lost = (err?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      for (const list of this.subscribers.values()) for (const s of list) s.listening(false);
      if (!this.stopped) {
        this.logger.warn({ err }, 'PostgreSQL notification connection lost; reconnecting');
        this.schedule();
      }
      client.end().catch(() => undefined);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    this.connecting = true;
    try {
      await client.connect();
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.connecting = false;
      await this.listenOn(client, [...this.subscribers.keys()]);
    } catch (err) {
      if (this.client === client) lost(err as Error);
      else {
        client.end().catch(() => undefined);
        if (!this.stopped) this.schedule();
      }
    } finally {
      this.connecting = false;
    }
  }

  private async listenOn(client: pg.Client, channels: string[]): Promise<void> {
    for (const channel of channels) {
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      if (this.client === client) for (const s of this.subscribers.get(channel) ?? []) s.listening(true);
    }
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
