import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMON_ERROR_STATUS } from '../errors/app-error.js';
import { LogCapture } from '../testing/log-capture.js';
import { createServiceApp, type ServiceApp } from './create-app.js';
import { DASHBOARD_CSP, registerDashboard } from './dashboard.js';

async function makeApp(root: string): Promise<ServiceApp> {
  const { app } = await createServiceApp({ title: 't', version: '1.0.0', description: 't', errorTable: COMMON_ERROR_STATUS, logLevel: 'silent', bodyLimit: 1024, trustProxy: false, keyLocations: ['bearer'], logStream: new LogCapture() });
  registerDashboard(app, root);
  await app.ready();
  return app;
}

/** The ICO header of one 16×16 picture (enough to tell an icon from a JSON 404). */
const ICO = Buffer.from('000001000100101000000100200068040000', 'hex');

describe('dashboard static files', () => {
  let dir: string;
  let app: ServiceApp;
  let unbuilt: ServiceApp;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashboard-static-'));
    await mkdir(join(dir, 'site', 'assets'), { recursive: true });
    await writeFile(join(dir, 'site', 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(join(dir, 'site', 'assets', 'index-abc123.js'), 'console.log(1)');
    await writeFile(join(dir, 'site', 'assets', 'index-abc123.css'), 'body{}');
    await writeFile(join(dir, 'secret.txt'), 'outside the build');
    await writeFile(join(dir, 'site', 'favicon.ico'), ICO);
    app = await makeApp(join(dir, 'site'));
    unbuilt = await makeApp(join(dir, 'missing'));
  });
  after(async () => {
    await app.close();
    await unbuilt.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('index and any page path answer the app with the CSP, revalidated; /dashboard redirects', async () => {
    for (const url of ['/dashboard/', '/dashboard/jobs', '/dashboard/webhooks/wh_1', '/dashboard/index.html']) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.body, '<!doctype html><title>app</title>');
      assert.equal(res.headers['content-security-policy'], DASHBOARD_CSP);
      assert.match(DASHBOARD_CSP, /default-src 'self'/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['x-frame-options'], 'DENY');
    }
    const bare = await app.inject('/dashboard');
    assert.equal(bare.statusCode, 301);
    assert.equal(bare.headers.location, '/dashboard/');
    // The bare host leads to the dashboard rather than a JSON 404 (issue 30).
    const root = await app.inject('/');
    assert.deepEqual([root.statusCode, root.headers.location], [302, '/dashboard/']);
    assert.deepEqual(Object.keys(((await app.inject('/openapi.json')).json() as { paths: Record<string, unknown> }).paths).filter((p) => p === '/'), [], 'a page, not API: not in the document');
    assert.equal((await app.inject({ method: 'HEAD', url: '/dashboard/jobs' })).statusCode, 200);
  });

  test('hashed assets: their content type, cached for a year; a missing file is 404 in the error shape', async () => {
    const js = await app.inject('/dashboard/assets/index-abc123.js');
    assert.equal(js.statusCode, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(js.body, 'console.log(1)');
    assert.equal((await app.inject('/dashboard/assets/index-abc123.css')).headers['content-type'], 'text/css; charset=utf-8');
    const missing = await app.inject('/dashboard/assets/nope.js');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error, 'not_found');
  });

  test('/favicon.ico answers the mark, cached for a month (issue 44: every tab logged its 404)', async () => {
    const icon = await app.inject('/favicon.ico');
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/x-icon');
    assert.equal(icon.headers['cache-control'], 'public, max-age=2592000');
    assert.deepEqual(icon.rawPayload, ICO);
    assert.equal((await unbuilt.inject('/favicon.ico')).statusCode, 404);
  });

  test('nothing outside the build folder, however the path is spelled', async () => {
    for (const url of ['/dashboard/../secret.txt', '/dashboard/..%2fsecret.txt', '/dashboard/%2e%2e/secret.txt', '/dashboard/assets/..%2f..%2fsecret.txt', '/dashboard/%2e%2e%2fsecret.txt', '/dashboard/..\\secret.txt', '/dashboard/x%00.js']) {
      const res = await app.inject(url);
      assert.ok(!res.body.includes('outside the build'), url);
      assert.ok(res.statusCode === 404 || (res.statusCode === 200 && res.body.includes('<title>app</title>')), `${url}: ${res.statusCode}`);
    }
  });

  test('other methods are 405; the pages are not in the OpenAPI document; an unbuilt dashboard is 404 saying how to build it', async () => {
    const post = await app.inject({ method: 'POST', url: '/dashboard/jobs' });
    assert.equal(post.statusCode, 405);
    const doc = (await app.inject('/openapi.json')).json() as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard')), []);
    const res = await unbuilt.inject('/dashboard/');
    assert.equal(res.statusCode, 404);
    assert.match(res.json().message, /npm start/);
  });
});
