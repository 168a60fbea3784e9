import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { renderError } from './error-body.js';
import { isScimPath, SCIM_MEDIA_TYPE, scimErrorBody } from './scim-error.js';
import { redactUrl } from '../logging/logging.js';
import { noteErrorCode } from '../metrics/error-answers.js';

/** The one place that writes error bodies: every thrown error, unknown route and parser failure ends here. */
@Catch()
export class GlobalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const rendered = renderError(exception, request?.id);
    if (rendered.unexpected) {
      this.logger.error(
        { err: exception, requestId: request?.id, method: request?.method, url: redactUrl(request?.url) },
        'Unhandled error',
      );
    }
    if (reply.sent) return;
    noteErrorCode(reply, rendered.body.code);
    for (const [name, value] of Object.entries(rendered.headers)) reply.header(name, value);
    if (isScimPath(request?.url)) {
      // SCIM clients read RFC 7644 error bodies, whatever failed (the parser, the router, the handler).
      void reply
        .status(rendered.status)
        .type(SCIM_MEDIA_TYPE)
        .send(scimErrorBody(rendered.status, exception, rendered.body.error));
      return;
    }
    void reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
  }
}
