import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/auth.decorators.js';
import { RawResponse } from '../core/http/envelope.interceptor.js';
import { AppConfig } from '../core/config/app-config.js';
import { metricsAnswer } from '../core/metrics/metrics-endpoint.js';
import { Metrics } from '../core/metrics/metrics.js';

@ApiTags('health')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @RawResponse()
  @ApiOperation({
    summary: 'Prometheus metrics of this API process',
    description: 'Text exposition format. Open unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>`.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'bmapi_http_request_duration_seconds, bmapi_sends_total, bmapi_webhook_* and the process metrics' })
  @ApiUnauthorizedResponse({ description: 'METRICS_TOKEN is set and the bearer token is missing or wrong' })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    const answer = await metricsAnswer(this.metrics, this.config.metricsToken, authorization);
    res.status(answer.status).type(answer.contentType).send(answer.body);
  }
}
