// The baseline of bench:api: a bare Fastify route that parses the same JSON body and answers
// a small JSON object — what the framework alone costs on this machine, measured in the same run.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/bare', async (request) => ({ email: request.body?.email ?? null, ok: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) });
process.stdout.write(`${JSON.stringify({ event: 'ready', port: app.server.address().port })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
