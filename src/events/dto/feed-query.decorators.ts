import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const MAX_FEED_WAIT_SECONDS = 30;

/** The `after` query parameter of a feed (events, messages): an opaque cursor; `description` says what it follows. */
export const FeedAfter = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({ example: '0', description }),
    IsOptional(),
    IsString({ message: 'after must be a cursor string' }),
    MaxLength(200, { message: 'after is not a cursor of this feed' }),
  );

/** The `wait` query parameter of a feed: a long poll of 0–30 seconds. */
export const FeedWait = () =>
  applyDecorators(
    ApiPropertyOptional({
      minimum: 0,
      maximum: MAX_FEED_WAIT_SECONDS,
      default: 0,
      description:
        'Feed form only: when nothing is newer than `after`, wait up to this many seconds (long poll); at the deadline the answer is an empty page with the same cursor.',
    }),
    IsOptional(),
    Type(() => Number),
    IsInt({ message: 'wait must be an integer number of seconds' }),
    Min(0, { message: 'wait must be at least 0' }),
    Max(MAX_FEED_WAIT_SECONDS, { message: `wait must be at most ${MAX_FEED_WAIT_SECONDS}` }),
  );
