import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { newId } from '../ids.js';

/** How long a client may take to send a request (issue #15: a body that never finished was held open for over 100 s). */
export interface HttpTimeouts {
  /** From the connection's first byte of a request to the end of its headers (Node's `headersTimeout`). */
  headersMs: number;
  /** From the first byte to the end of the body, whatever the progress (Node's `requestTimeout`); 0: no total limit. */
  requestMs: number;
  /** Longest pause while a request body is still arriving: a slow upload that keeps sending is never cut by it. */
  bodyIdleMs: number;
}

/** How often Node checks the headers and request time-outs (its default, 30 s, would let a slow client stay that much longer). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** Deepest JSON nesting a body may have: our schemas need 4 levels; parsing millions of nested arrays stalled the event loop (issue #15). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a JSON text nests arrays and objects deeper than `max`. One pass over the bytes,
 * strings skipped; it stops at the first level too deep, so a body of nested brackets is
 * refused after `max` bytes rather than parsed.
 */
export function jsonNestingExceeds(bytes: Uint8Array, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === 0x22) {
      // a string: skip to its closing quote, stepping over escapes
      for (i++; i < n; i++) {
        const s = bytes[i];
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** One answer written straight to the socket, in the contract's error shape. */
function rawAnswer(status: number, reason: string, code: string, message: string): string {
  const body = JSON.stringify({ error: code, message });
  // A request id like every other answer's (issue 29), made here: no request object exists yet.
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${newId('req')}\r\nConnection: close\r\n\r\n${body}`;
}

/** Whether an answer to the request on `socket` has already started (then nothing more may be written). */
function answerStarted(socket: Socket): boolean {
  // Node's own check before it writes a 400 on a client error (lib/_http_server.js, socketOnError).
  const res = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return res?.headersSent === true;
}

/** Node's parser errors, by code, as the answer's message (anything else: a generic one). */
const FRAMING_MESSAGES: Record<string, string> = {
  HPE_INVALID_CHUNK_SIZE: 'The request body is not valid chunked encoding (bad chunk size).',
  HPE_INVALID_TRANSFER_ENCODING: 'The Transfer-Encoding header is not valid.',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'The request has both Content-Length and Transfer-Encoding, or conflicting lengths.',
  HPE_INVALID_CONTENT_LENGTH: 'The Content-Length header is not valid.',
  HPE_INVALID_METHOD: 'The request method is not valid.',
  HPE_INVALID_URL: 'The request target is not valid.',
  HPE_INVALID_VERSION: 'The HTTP version is not valid.',
  HPE_INVALID_HEADER_TOKEN: 'A header name or value is not valid.',
  HPE_LF_EXPECTED: 'The request line or a header is not terminated properly.',
  HPE_CR_EXPECTED: 'The request line or a header is not terminated properly.',
};

/**
 * Fastify's `clientErrorHandler`: the errors Node's HTTP parser and time-outs raise before
 * any route runs (bad framing, oversized headers, a client too slow) are answered in the
 * contract's error shape with a common code — 400 `invalid_request`, 431
 * `headers_too_large`, 408 `request_timeout` — instead of Fastify's `{"error":"Bad
 * Request","message":"Client Error","statusCode":400}`; then the connection is closed.
 * Fastify calls it with the instance as `this`.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, code, message]: [number, string, string, string] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'request_timeout', 'The request was not received in time; send the headers and body without long pauses.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are over the size limit (16 KiB in all).']
        : [400, 'Bad Request', 'invalid_request', FRAMING_MESSAGES[err.code ?? ''] ?? 'The request is not valid HTTP/1.1.'];
  this.log.debug({ code: err.code }, 'client error');
  (this as FastifyInstance & { metrics?: { observeClientError(code: string): void } }).metrics?.observeClientError(code);
  if (socket.writable && !answerStarted(socket)) socket.end(rawAnswer(status, reason, code, message));
  socket.destroy();
}

/**
 * Cuts a request whose body stops arriving for `idleMs` (408 `request_timeout`) while
 * leaving alone a slow upload that keeps sending and a complete request the service is
 * still answering. It uses the socket's idle timer, which every byte received or sent
 * re-arms; when it fires with a request whose body is not complete, the client paused.
 */
export function installBodyIdleTimeout(server: Server, idleMs: number, onCut: () => void = () => undefined): void {
  if (idleMs <= 0) return;
  const current = new WeakMap<Socket, IncomingMessage>();
  server.on('request', (req: IncomingMessage) => current.set(req.socket, req));
  server.setTimeout(idleMs, (socket: Socket) => {
    const req = current.get(socket);
    // No request on the connection (keep-alive between requests: keepAliveTimeout's job;
    // headers still arriving: headersTimeout's) or a complete one being answered: leave it.
    if (!req || req.complete || req.socket !== socket) return;
    onCut();
    if (socket.writable && !answerStarted(socket)) socket.end(rawAnswer(408, 'Request Timeout', 'request_timeout', `The request body stopped arriving for ${Math.round(idleMs / 1000)} s.`));
    socket.destroy();
  });
}
