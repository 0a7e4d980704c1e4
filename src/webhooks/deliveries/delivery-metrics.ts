import { Injectable, OnModuleInit } from '@nestjs/common';
import { Metrics } from '../../core/metrics/metrics.js';
import { QUEUES } from '../../core/queue/queue.constants.js';
import { QueueService } from '../../core/queue/queue.service.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';

/** The webhook pipeline's backlog, read when /metrics is scraped: jobs waiting in the queue, and processing lag. */
@Injectable()
export class DeliveryMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly queues: QueueService,
    private readonly deliveries: WebhookDeliveriesRepository,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'bmapi_webhook_queue_jobs_waiting',
      'Webhook jobs waiting for a worker (waiting + delayed re-runs)',
      async () => {
        const counts = await this.queues
          .queue(QUEUES.webhookDeliveries)
          .getJobCounts('waiting', 'delayed', 'prioritized');
        return Object.values(counts).reduce((a, b) => a + b, 0);
      },
    );
    this.metrics.gauge(
      'bmapi_webhook_oldest_unprocessed_age_seconds',
      'Age of the oldest delivery not processed yet (0 when none waits)',
      async () => {
        const at = await this.deliveries.oldestUnprocessedAt();
        return at ? Math.max(0, (Date.now() - at.getTime()) / 1000) : 0;
      },
    );
  }
}
