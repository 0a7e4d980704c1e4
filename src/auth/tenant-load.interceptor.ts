import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { defer, finalize, from, mergeMap, type Observable } from 'rxjs';
import { PerKeySlots } from '../core/async/per-key-slots.js';
import { Semaphore } from '../core/async/semaphore.js';
import { AppConfig } from '../core/config/app-config.js';
import { ApiError } from '../core/http/api-error.js';

export const OWN_IN_FLIGHT_LIMITS = 'ownInFlightLimits';
/** Routes holding requests open for a long time under caps of their own (media transfers): not counted here. */
export const OwnInFlightLimits = () => SetMetadata(OWN_IN_FLIGHT_LIMITS, true);

export const ORGANIZATION_BUSY = 'Too many requests in flight for this organization';
export const READS_BUSY = 'Service Unavailable: too many reads waiting for the database';

const READS = new Set(['GET', 'HEAD']);

/**
 * Issue 37, finding 2: one key pair could take the whole database pool (200 concurrent list reads: 500s for
 * everyone, readiness 503). Per API process, in memory (no database round trip, a Map lookup per request):
 *
 * - every request of an organization (key pair or console session) counts against ORGANIZATION_REQUESTS_IN_FLIGHT,
 *   and its reads (GET) against ORGANIZATION_READS_IN_FLIGHT: past either, 429 + Retry-After at once;
 * - reads of every tenant together run at most DATABASE_POOL_SIZE − DATABASE_POOL_RESERVED at once (the rest wait
 *   their turn in arrival order, up to 10 × that many; beyond, 503 + Retry-After): the reserved connections stay
 *   free for sends, webhook ingest and the worker's effects. Readiness has a connection of its own (Db.ping).
 *
 * Long polls (`wait`) are not counted (they hold no connection while they wait, and have their own caps:
 * LONG_POLLS_PER_*), nor routes marked `@OwnInFlightLimits()` (media transfers: MEDIA_MAX_TRANSFERS_*).
 */
@Injectable()
export class TenantLoadInterceptor implements NestInterceptor {
  private readonly requests: PerKeySlots;
  private readonly reads: PerKeySlots;
  private readonly readPermits: Semaphore;

  constructor(
    private readonly reflector: Reflector,
    config: AppConfig,
  ) {
    this.requests = new PerKeySlots(config.organizationRequestsInFlight);
    this.reads = new PerKeySlots(config.organizationReadsInFlight);
    const permits = Math.max(1, config.databasePoolSize - config.databasePoolReserved);
    this.readPermits = new Semaphore(permits, permits * 10);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    const organizationId = req.apiKey?.organizationId ?? req.operator?.organizationId;
    if (organizationId === undefined || req.query?.wait !== undefined) return next.handle();
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(OWN_IN_FLIGHT_LIMITS, targets)) return next.handle();

    const request = this.requests.take(organizationId);
    if (!request) throw busy();
    if (!READS.has(req.method)) return next.handle().pipe(finalize(request));
    const read = this.reads.take(organizationId);
    if (!read) {
      request();
      throw busy();
    }
    return defer(() => from(this.readPermits.acquire())).pipe(
      mergeMap((permit) => {
        if (!permit) throw new ApiError(503, READS_BUSY, { headers: { 'Retry-After': '1' } });
        return next.handle().pipe(finalize(permit));
      }),
      finalize(() => {
        read();
        request();
      }),
    );
  }
}

function busy(): ApiError {
  return new ApiError(429, ORGANIZATION_BUSY, { headers: { 'Retry-After': '1' } });
}
