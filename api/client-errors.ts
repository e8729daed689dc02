import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, errorBody, errorShapeOfPath } from './errors.js';
import type { ApiErrorCode } from './errors.js';

/** The request line's path, from the bytes Node parsed before it gave up (it may have got no further). */
function pathOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '/';
  const line = /^[A-Z]+ ([^ ?\r\n]+)/.exec(rawPacket.subarray(0, 8192).toString('latin1'));
  return line?.[1] ?? '/';
}

function errorOf(code: string | undefined): ApiError {
  const known: Partial<Record<string, [ApiErrorCode, string]>> = {
    HPE_HEADER_OVERFLOW: ['request_header_fields_too_large', 'The request headers are too large'],
    ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request took too long to arrive'],
  };
  const [errorCode, message] = (code === undefined ? undefined : known[code]) ?? [
    'validation_error',
    'The request is not valid HTTP',
  ];
  return new ApiError(errorCode, message);
}

/**
 * Requests Node refuses before any handler runs (headers over its limit, a malformed request line,
 * a request that never finished arriving) get the API's JSON error in the documented shape —
 * Node's own answer has no body. A connection the client already dropped is only closed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = errorOf(err.code);
    const body = JSON.stringify(errorBody(error, errorShapeOfPath(pathOf(err.rawPacket))));
    socket.end(
      [
        `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}

/** A request that arrives while the server is still starting (the app not yet attached): 503, retry in a second. */
export function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const error = new ApiError('service_unavailable', 'The server is starting; retry in a moment');
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  res
    .writeHead(error.status, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1' })
    .end(JSON.stringify(errorBody(error, errorShapeOfPath(path))));
}
