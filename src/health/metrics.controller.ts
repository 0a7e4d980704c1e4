import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/auth.decorators.js';
import { RawResponse } from '../core/http/envelope.interceptor.js';
import { AppConfig } from '../core/config/app-config.js';
import { metricsAnswer } from '../core/metrics/metrics-endpoint.js';
import { Metrics } from '../core/metrics/metrics.js';

/**
 * Prometheus' scrape target (text exposition format, docs/operations-and-scaling.md "Metrics"): an operations endpoint, not part of
 * the API's OpenAPI document. Open unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>`.
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @RawResponse()
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    const answer = await metricsAnswer(this.metrics, this.config.metricsToken, authorization);
    res.status(answer.status).type(answer.contentType).send(answer.body);
  }
}
