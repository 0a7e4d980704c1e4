import { ApiProperty } from '@nestjs/swagger';

/** The receiver's answer once a delivery is stored durably. */
export class WebhookReceivedView {
  @ApiProperty({ enum: [true] }) received: true;
}
