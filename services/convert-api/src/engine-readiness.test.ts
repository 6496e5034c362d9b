// Issue 44: a fresh machine set up by `npm start` alone had no Chromium, and /readyz answered
// 503 for ever with a log line that named a path, not a remedy. A missing engine's readiness
// message names the package to install and the setting that turns the engine off; an engine
// installed later is found without a restart; a disabled one is not counted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Converter, type EngineProbe } from '@mailconv/converter';
import type { ServiceApp } from '@mailconv/platform';
import { buildApp } from './app.js';
import { loadConvertConfig } from './config.js';

let work: string;
let converter: Converter;
let app: ServiceApp;
const lines: string[] = [];
let installed = false;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-engine-readiness-'));
  converter = await Converter.create({
    workDir: join(work, 'work'),
    disabledEngines: ['calibre'],
    reprobeIntervalMs: 0,
    // Potrace as a machine has it before and after `apt-get install potrace`.
    replaceEngines: [
      {
        name: 'potrace', reads: ['pbm', 'pgm', 'ppm', 'bmp'], writes: ['svg', 'pdf', 'eps', 'ps'],
        supports: () => true, tradesQualityForSize: () => false, convert: async () => undefined,
        probe: async (): Promise<EngineProbe> =>
          installed
            ? { engine: 'potrace', available: true, version: '1.16', missing: [], requires: ['/usr/bin/potrace'] }
            : { engine: 'potrace', available: false, version: null, missing: ['/usr/bin/potrace'], requires: ['/usr/bin/potrace'], warning: 'potrace disabled: missing /usr/bin/potrace; install it with `apt-get install potrace` (npm start installs every engine)' },
      },
    ],
  });
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConvertConfig({ CONVERT_DATABASE_URL: `sqlite:${join(work, 'convert.db')}`, CONVERT_LOG_LEVEL: 'warn', CONVERT_STORAGE_DIR: join(work, 'storage') });
  app = await buildApp(config, { converter, logStream });
});
after(async () => {
  await app?.close();
  await converter?.close();
  await rm(work, { recursive: true, force: true });
});

test('a missing engine: /readyz 503, the log names the package and the setting; installed later: 200 without a restart', async () => {
  const started = lines.map((l) => JSON.parse(l) as { msg: string; engine?: string }).find((e) => e.engine === 'potrace');
  assert.equal(started?.msg, 'potrace disabled: missing /usr/bin/potrace; install it with `apt-get install potrace` (npm start installs every engine); or turn it off with CONVERT_ENGINES_DISABLED=potrace', 'logged at start-up');

  const before = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(before.statusCode, 503);
  const body = before.json() as { checks: Record<string, string> };
  assert.equal(body.checks.engine_potrace, 'error');
  assert.equal(body.checks.engine_calibre, undefined, 'a disabled engine is not counted');
  assert.equal(body.checks.engine_libreoffice, 'ok');
  const failure = lines.map((l) => JSON.parse(l) as { msg: string; check?: string; err?: { message: string } }).find((e) => e.check === 'engine_potrace');
  assert.match(failure?.err?.message ?? '', /apt-get install potrace.*CONVERT_ENGINES_DISABLED=potrace/);

  installed = true;
  const after = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(after.statusCode, 200, after.body);
  assert.equal((after.json() as { checks: Record<string, string> }).checks.engine_potrace, 'ok');
});

test('CONVERT_ENGINES_DISABLED: names only, every problem reported', () => {
  assert.deepEqual(loadConvertConfig({ CONVERT_ENGINES_DISABLED: 'chromium, calibre' }).disabledEngines, ['chromium', 'calibre']);
  assert.deepEqual(loadConvertConfig({}).disabledEngines, []);
  assert.throws(() => loadConvertConfig({ CONVERT_ENGINES_DISABLED: 'chromium,rm -rf' }), /CONVERT_ENGINES_DISABLED.*"rm -rf" is not one/);
});
