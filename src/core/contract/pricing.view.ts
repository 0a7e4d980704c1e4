import { ApiProperty } from '@nestjs/swagger';

/**
 * Meta's pricing object of a status webhook (per-message pricing: counts, not amounts), as the API shows it wherever
 * it appears (a message's `pricing`, a status event's `pricing`): one view, Meta's keys in camelCase like every other
 * field.
 */
export class PricingView {
  @ApiProperty({ nullable: true, type: String, example: 'PMP', description: "Meta's pricing_model" })
  pricingModel: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'utility',
    description: 'marketing, utility, authentication, authentication_international, service, …',
  })
  category: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'regular',
    description: 'regular, free_customer_service or free_entry_point',
  })
  type: string | null;
  @ApiProperty({ nullable: true, type: Boolean, description: 'Deprecated by Meta in favour of type' })
  billable: boolean | null;
}
