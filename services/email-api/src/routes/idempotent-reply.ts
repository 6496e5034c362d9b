import type { FastifyReply } from 'fastify';
import type { IdempotentOutcome } from '../idempotency/idempotency.service.js';

/**
 * Sends an idempotent request's outcome: a replay as the stored bytes with
 * `Idempotent-Replayed: true` (a string payload skips serialisation), a new answer as its
 * serialised bytes when it was stored, else as the object.
 */
export function sendIdempotent<T>(reply: FastifyReply, outcome: IdempotentOutcome<T>, statusCode: number): FastifyReply {
  if (outcome.kind === 'replay') return reply.code(outcome.statusCode).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(outcome.body);
  reply.code(statusCode);
  if (outcome.body === null) return reply.send(outcome.answer);
  return reply.type('application/json; charset=utf-8').send(outcome.body);
}
