import { ApiProperty } from '@nestjs/swagger';

/** A file uploaded to Meta for a send (POST …/media): its Meta media id. */
export class UploadedMediaView {
  @ApiProperty({ example: '1037543291543636', description: 'Use as image.id, video.id, … in POST /messages' })
  id: string;
  @ApiProperty({ example: 'image/png' }) mimeType: string;
  @ApiProperty({ example: 48213, description: 'Bytes' }) size: number;
}
