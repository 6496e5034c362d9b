import type { Kysely } from 'kysely';
import { AppError } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';
import type { IdempotencyRepository } from '../repositories/idempotency.repository.js';

/** How long a stored answer is replayed (contract: 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Stores the answer of a keyed request; inside the caller's transaction when `exec` is given. */
export type SaveAnswer = (exec?: Kysely<EmailTables>) => Promise<void>;

/** A request that may carry an `Idempotency-Key`. */
export interface IdempotentRequest<T> {
  accountId: string;
  /** The `Idempotency-Key` header; undefined: the work simply runs. */
  key: string | undefined;
  /** Fingerprint of the request (method and body): the same key with another fingerprint is a conflict. */
  fingerprint: () => string;
  /** Status the answer is sent with (and replayed with). */
  statusCode: number;
  /** The work, run at most once per key while its answer is kept. */
  work: () => Promise<T>;
  /** The answer as the bytes sent (the route's serializer): what a replay sends again. */
  serialize: (answer: T) => string;
  /**
   * Commits the answer's side effects; it must call `save` (with its transaction, so that
   * both commit together). Without it the answer is saved on its own.
   */
  commit?: (answer: T, save: SaveAnswer) => Promise<void>;
}

/**
 * What to send: the new answer (with its serialised bytes when a key was given), or the
 * stored bytes of the first request with this key.
 */
export type IdempotentOutcome<T> = { kind: 'answer'; answer: T; body: string | null } | { kind: 'replay'; statusCode: number; body: string };

/**
 * The `Idempotency-Key` flow of the email service, in one place for `POST /api/v1/verify-batch`
 * and `POST /api/v1/jobs`: validate the key, claim it (a different request with the same key
 * is 409 `conflict`, as is one still running), replay a stored answer, otherwise run the
 * work, store its answer, and forget the claim if the work fails so that a retry runs it.
 */
export class IdempotencyService {
  constructor(private readonly deps: { repository: IdempotencyRepository; clock: () => Date; ttlMs?: number }) {}

  async run<T>(request: IdempotentRequest<T>): Promise<IdempotentOutcome<T>> {
    const { accountId, key } = request;
    const commit = request.commit ?? ((_answer: T, save: SaveAnswer) => save());
    if (key === undefined) {
      const answer = await request.work();
      await commit(answer, async () => {});
      return { kind: 'answer', answer, body: null };
    }
    if (!IDEMPOTENCY_KEY.test(key)) throw new AppError('invalid_request', 'Idempotency-Key must be 1–255 visible ASCII characters.', { field: 'Idempotency-Key' });
    const claim = await this.deps.repository.claim(accountId, key, request.fingerprint(), this.deps.clock(), this.deps.ttlMs ?? IDEMPOTENCY_TTL_MS);
    if (claim.kind === 'mismatch') throw new AppError('conflict', 'This Idempotency-Key was already used with a different request body.');
    if (claim.kind === 'in_progress') throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
    if (claim.kind === 'replay') return { kind: 'replay', statusCode: claim.statusCode, body: claim.body };
    try {
      const answer = await request.work();
      const body = request.serialize(answer);
      await commit(answer, (exec) => this.deps.repository.complete(accountId, key, request.statusCode, body, exec));
      return { kind: 'answer', answer, body };
    } catch (err) {
      await this.deps.repository.release(accountId, key);
      throw err;
    }
  }
}
