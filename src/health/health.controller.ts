import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { ApiEnvelope } from '../core/http/openapi.js';
import { LivenessDoc, ReadinessDoc } from './dto/health.view.js';
import { Public } from '../auth/auth.decorators.js';
import { HealthService, type Readiness } from './health.service.js';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness: the process is up' })
  @ApiEnvelope(LivenessDoc)
  live(): { status: string; uptimeSeconds: number } {
    return { status: 'ok', uptimeSeconds: Math.round(process.uptime()) };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: PostgreSQL and Redis answer, and the process is not shutting down',
  })
  @ApiEnvelope(ReadinessDoc)
  @ApiServiceUnavailableResponse({
    description: 'One `errors[]` item per dependency that is down (or `process` while shutting down)',
  })
  ready(): Promise<Readiness> {
    return this.health.readiness();
  }
}
