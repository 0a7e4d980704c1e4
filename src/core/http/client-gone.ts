import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';

/**
 * An AbortSignal that fires when the client goes away before the response is complete, for work that waits
 * (a long poll): it can stop at once instead of holding its timers and queries for nobody.
 */
export const ClientGone = createParamDecorator((_: unknown, ctx: ExecutionContext): AbortSignal => {
  const res = ctx.switchToHttp().getResponse<Response>();
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
});
