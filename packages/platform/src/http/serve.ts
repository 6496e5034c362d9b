import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';

/**
 * Listens, then shuts down gracefully on SIGTERM/SIGINT: stop accepting connections, let
 * requests in flight finish (up to `graceMs`), run the app's onClose hooks (flushing
 * buffers, closing the database), and exit.
 */
export async function serve(app: FastifyInstance, listen: { host: string; port: number }, graceMs = 10_000): Promise<string> {
  closeWithGrace({ delay: graceMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  return app.listen(listen);
}
