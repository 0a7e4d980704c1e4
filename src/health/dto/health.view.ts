import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Readiness } from '../health.service.js';

@ApiSchema({ name: 'Liveness' })
export class LivenessDoc {
  @ApiProperty({ example: 'ok' }) status!: string;
  @ApiProperty({ example: 3600 }) uptimeSeconds!: number;
}

@ApiSchema({ name: 'ReadinessChecks' })
class ReadinessChecksDoc {
  @ApiProperty({ enum: ['up'] }) postgres!: 'up';
  @ApiProperty({ enum: ['up'] }) redis!: 'up';
}

@ApiSchema({ name: 'Readiness' })
export class ReadinessDoc implements Readiness {
  @ApiProperty({ enum: ['ready'] }) status!: 'ready';
  @ApiProperty({ type: ReadinessChecksDoc }) checks!: ReadinessChecksDoc;
}
