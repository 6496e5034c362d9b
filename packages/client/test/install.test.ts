// The SDK and CLI as a newcomer installs them from a checkout (issue #30): `npm pack` of
// packages/client, then `npm install <tarball>` in a project of their own, outside the
// repository. Offline: the package has no dependencies, and npm is told never to reach the
// registry (tests talk to loopback only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './services.test-support.js';

const NPM_OFFLINE = { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

test('npm pack + npm install <tarball> outside the repository: the SDK imports and `npx mailconv` runs', { timeout: 180_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'client-install-'));
  try {
    const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, env: { ...process.env, ...NPM_OFFLINE }, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
    npm(['pack', '-w', 'packages/client', '--pack-destination', work], ROOT);
    const tarballs = (await readdir(work)).filter((f) => f.endsWith('.tgz'));
    assert.deepEqual(tarballs, ['mailconv-client-0.1.0.tgz'], 'the name the README gives');
    const project = join(work, 'my-app');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }));
    npm(['install', join(work, tarballs[0]!)], project);
    await writeFile(join(project, 'check.mjs'), "import { ConvertClient, EmailClient, verifyWebhookSignature } from '@mailconv/client';\nconsole.log([typeof ConvertClient, typeof EmailClient, typeof verifyWebhookSignature].join(' '));\n");
    assert.equal(execFileSync(process.execPath, ['check.mjs'], { cwd: project, encoding: 'utf8' }).trim(), 'function function function');
    const help = execFileSync('npx', ['--offline', 'mailconv', '--help'], { cwd: project, env: { ...process.env, ...NPM_OFFLINE }, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    assert.match(help, /mailconv verify/);
    const installed = await readdir(join(project, 'node_modules', '@mailconv', 'client'));
    assert.ok(!installed.includes('test') && !installed.includes('src'), `only the built package is installed: ${installed.join(', ')}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
