import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/auth.decorators.js';
import { HealthService, type Readiness } from './health.service.js';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ summary: 'Liveness: the process is up' })
  @ApiOkResponse({ description: '`data: {status: "ok", uptimeSeconds}`' })
  live(): { status: string; uptimeSeconds: number } {
    return { status: 'ok', uptimeSeconds: Math.round(process.uptime()) };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer' })
  @ApiOkResponse({ description: '`data: {status: "ready", checks: {postgres: "up", redis: "up"}}`' })
  @ApiServiceUnavailableResponse({ description: 'One `errors[]` item per dependency that is down' })
  ready(): Promise<Readiness> {
    return this.health.readiness();
  }
}
