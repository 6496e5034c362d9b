import { Type, type TSchema } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { StringEnum } from './schemas.js';

/** A readiness check: resolves when the dependency answers, rejects otherwise. */
export type ReadinessCheck = () => Promise<void>;

const Health = Type.Object({ status: StringEnum(['ok']) });
/**
 * A detail section of `/readyz` (e.g. the email service's `smtp`): read from what the service
 * already knows, never a check run at request time, and never deciding readiness.
 */
export interface ReadinessSection {
  schema: TSchema;
  read: () => unknown;
}

const READY_BASE = {
  status: StringEnum(['ok', 'unavailable']),
  checks: Type.Record(Type.String(), StringEnum(['ok', 'error'])),
};

/** `GET /healthz` (the process is alive) and `GET /readyz` (its dependencies answer). */
export function registerHealthRoutes(app: FastifyInstance, checks: Record<string, ReadinessCheck>, timeoutMs = 2000, sections: Record<string, ReadinessSection> = {}): void {
  const Ready = Type.Object({ ...READY_BASE, ...Object.fromEntries(Object.entries(sections).map(([name, s]) => [name, s.schema])) });
  app.get('/healthz', { schema: { tags: ['health'], summary: 'Liveness: the process is up', response: { 200: Health } } }, async () => ({ status: 'ok' as const }));

  app.get(
    '/readyz',
    { schema: { tags: ['health'], summary: 'Readiness: the database and other dependencies answer', response: { 200: Ready, 503: Ready } } },
    async (request, reply) => {
      const results: Record<string, 'ok' | 'error'> = {};
      await Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          let timer: NodeJS.Timeout | undefined;
          try {
            await Promise.race([check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} timed out`)), timeoutMs)))]);
            results[name] = 'ok';
          } catch (err) {
            request.log.warn({ err, check: name }, 'readiness check failed');
            results[name] = 'error';
          } finally {
            clearTimeout(timer);
          }
        }),
      );
      const ok = Object.values(results).every((r) => r === 'ok');
      const detail = Object.fromEntries(Object.entries(sections).map(([name, s]) => [name, s.read()]));
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks: results, ...detail });
    },
  );
}
