import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { RedisService } from '../../core/redis/redis.service.js';
import { PRESSURE_TICK_MS, PRESSURE_TTL_MS, receiversSaturatedKey } from '../acks-first.js';
import { Saturation } from './in-flight.js';
import { WebhookReceiverService } from './webhook-receiver.service.js';

/**
 * API side: says so every tick while this process is saturated (`Saturation`: WEBHOOK_HOLD_PROCESSING_IN_FLIGHT
 * acknowledgements waiting at a tick starts it, a tick whose peak stays below ends it).
 */
@Injectable()
export class ReceiverPressure implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly receiver: WebhookReceiverService,
    private readonly redis: RedisService,
    @Inject(AppConfig) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const threshold = this.config.webhookHoldInFlight;
    if (threshold <= 0 || this.config.webhookHoldMaxMs <= 0) return;
    const key = receiversSaturatedKey(this.config);
    const saturation = new Saturation(threshold);
    this.timer = setInterval(() => {
      // Not awaited, errors dropped: a Redis that does not answer only means the workers are not asked to hold.
      if (saturation.tick(this.receiver.waiting))
        this.redis.client.set(key, '1', 'PX', PRESSURE_TTL_MS).catch(() => undefined);
    }, PRESSURE_TICK_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}
