import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { map, type Observable } from 'rxjs';
import { envelope, SUCCESS } from './envelope.js';

const RAW_RESPONSE = 'rawResponse';
/** Opt a route out of the envelope (e.g. Meta's webhook handshake answers the challenge as plain text). */
export const RawResponse = () => SetMetadata(RAW_RESPONSE, true);

/** Wraps every successful handler result as `{statusCode, message: "Success", data}`. */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const raw = this.reflector.getAllAndOverride<boolean>(RAW_RESPONSE, [context.getHandler(), context.getClass()]);
    if (raw) return next.handle();
    const res = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(map((data: unknown) => envelope(res.statusCode, SUCCESS, { data: data ?? null })));
  }
}
