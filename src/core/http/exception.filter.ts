import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { APP_LOGGER } from '../logging/app-logger.js';
import { ApiError } from './api-error.js';
import { envelope } from './envelope.js';
import { httpAnswerOf } from './error-mapper.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
};

/**
 * The one place errors become responses, always in the spec's envelope: domain errors through the mapper,
 * deliberate HTTP errors as they are. Anything that is not a deliberate
 * HTTP error is a 500 whose body says nothing about internals; the details go to the log with the request id.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(APP_LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (res.headersSent) return;

    const answer = httpAnswerOf(exception);
    if (answer) {
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      res.status(answer.statusCode).json(envelope(answer.statusCode, answer.message, { errors: answer.errors }));
      return;
    }

    if (exception instanceof ApiError) {
      const { errors, data, headers } = exception.details;
      for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
      const status = exception.getStatus();
      res.status(status).json(envelope(status, exception.message, { errors, data }));
      return;
    }

    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      let message = STATUS_TEXT[status] ?? exception.message;
      if (typeof response === 'string') message = response;
      else if (
        typeof response === 'object' &&
        response &&
        typeof (response as { message?: unknown }).message === 'string'
      ) {
        message = (response as { message: string }).message;
      }
      if (status === 404 && message.startsWith('Cannot ')) message = `Route ${req.method} ${req.path} not found`;
      if (status >= 500) this.logger.error({ reqId: req.id, err: exception }, 'http exception');
      res.status(status).json(envelope(status, message));
      return;
    }

    this.logger.error({ reqId: req.id, method: req.method, path: req.path, err: exception }, 'unhandled error');
    res.status(500).json(envelope(500, 'Internal server error'));
  }
}
