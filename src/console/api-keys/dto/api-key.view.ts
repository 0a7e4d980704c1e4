import { ApiProperty } from '@nestjs/swagger';

export class ApiKeyView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() wabaId: string;
  @ApiProperty({ example: 'ak_…' }) accessKey: string;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String, description: 'Updated within about 30 s of use' }) lastUsedAt:
    string | null;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'Email of the operator who issued it (still shown after that operator is removed); null for keys made before this was recorded',
  })
  createdBy: string | null;
}

export class CreatedApiKeyView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() wabaId: string;
  @ApiProperty({ example: 'ak_…' }) accessKey: string;
  @ApiProperty({ example: 'sk_…', description: 'Shown in this response only; store it now' }) secretKey: string;
  @ApiProperty() createdAt: string;
}
