// The output guard (issue 21): what an engine leaves in its job folder is read only when it
// is a regular file of the job with one link. Device nodes need root (mknod): CI runs as
// root, and a run without it fails saying so rather than skipping.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { link, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { runSandboxed, sandboxCapabilities } from '../exec/exec.js';
import { scratchDir } from '../testing/tools.js';
import { acceptEngineOutput, copyEngineOutput, openEngineOutput, readEngineText, UnsafeOutputError, writeJobFile, type SecurityEvent } from './output-guard.js';

let root: string;
let jobDir: string;
let secret: string;
const events: SecurityEvent[] = [];
const job = () => ({ dir: jobDir, onSecurityEvent: (e: SecurityEvent) => events.push(e) });

before(async () => {
  root = await scratchDir('conv-outguard-');
  jobDir = join(root, 'job');
  await mkdir(jobDir);
  secret = join(root, 'other-account-upload.bin');
  await writeFile(secret, 'CANARY-OTHER-ACCOUNT');
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function refused(path: string, kind: SecurityEvent['kind']): Promise<void> {
  const before = events.length;
  await assert.rejects(acceptEngineOutput(path, job(), 'test-engine'), (e: unknown) => {
    assert.ok(e instanceof UnsafeOutputError, String(e));
    assert.equal(e.code, 'conversion_failed');
    assert.equal(e.event.kind, kind);
    assert.doesNotMatch(e.message, /CANARY|other-account|\//, 'the client message names no path');
    return true;
  });
  assert.equal(events.length, before + 1, 'one security event per refusal');
  assert.equal(events.at(-1)?.kind, kind);
}

test('a regular file of the job is accepted and read; a missing one is "no output"', async () => {
  await writeFile(join(jobDir, 'ok.txt'), 'hello');
  assert.equal(await acceptEngineOutput(join(jobDir, 'ok.txt'), job(), 'e'), 5);
  assert.equal(await readEngineText(join(jobDir, 'ok.txt'), job(), 'e'), 'hello');
  assert.equal(await openEngineOutput(join(jobDir, 'missing'), job(), 'e'), null);
  await assert.rejects(acceptEngineOutput(join(jobDir, 'missing'), job(), 'e'), /no output/);
  await writeFile(join(jobDir, 'empty.txt'), '');
  await assert.rejects(acceptEngineOutput(join(jobDir, 'empty.txt'), job(), 'e'), /no output/);
  assert.equal(await acceptEngineOutput(join(jobDir, 'empty.txt'), job(), 'e', { allowEmpty: true }), 0);
});

test('a symlink, a hard link, a FIFO and a device node left as output are refused', async () => {
  await symlink(secret, join(jobDir, 'link.ttf'));
  await refused(join(jobDir, 'link.ttf'), 'symlink');
  await link(secret, join(jobDir, 'hard.ttf'));
  await refused(join(jobDir, 'hard.ttf'), 'hardlink');
  assert.equal(spawnSync('/usr/bin/mkfifo', [join(jobDir, 'fifo.ttf')]).status, 0);
  await refused(join(jobDir, 'fifo.ttf'), 'special_file');
  assert.equal(process.getuid?.(), 0, 'this test makes a device node with mknod, which needs root (CI runs as root)');
  assert.equal(spawnSync('/usr/bin/mknod', [join(jobDir, 'dev.ttf'), 'c', '1', '3']).status, 0);
  await refused(join(jobDir, 'dev.ttf'), 'special_file');
});

test('a folder on the way that is a symlink, and paths out of the job, are refused', async () => {
  await symlink(root, join(jobDir, 'pages'));
  await refused(join(jobDir, 'pages', 'other-account-upload.bin'), 'symlink');
  await refused(join(jobDir, '..', 'other-account-upload.bin'), 'escape');
  await refused(secret, 'escape');
  await refused(jobDir, 'escape');
});

test('a file owned by another user is refused', async () => {
  const path = join(jobDir, 'foreign.txt');
  await writeFile(path, 'x');
  assert.equal(spawnSync('/usr/bin/chown', ['12345', path]).status, 0, 'chown needs root (CI runs as root)');
  await refused(path, 'foreign_owner');
});

test('the service writes its own files anew, never through a link an engine left', async () => {
  const planted = join(jobDir, 'watermark.ps');
  await symlink(secret, planted);
  await writeJobFile(planted, 'ours');
  assert.equal(await readFile(secret, 'utf8'), 'CANARY-OTHER-ACCOUNT', 'the link target is untouched');
  assert.equal(await readFile(planted, 'utf8'), 'ours');
  const hard = join(jobDir, 'args.txt');
  await link(secret, hard);
  await writeJobFile(hard, 'args');
  assert.equal(await readFile(secret, 'utf8'), 'CANARY-OTHER-ACCOUNT', 'a hard link is replaced, not truncated');
  // A copy out of an engine's folder goes through the guard.
  await symlink(secret, join(jobDir, 'copied-link'));
  await assert.rejects(copyEngineOutput(join(jobDir, 'copied-link'), join(root, 'dest'), job(), 'libreoffice'), UnsafeOutputError);
  await writeFile(join(jobDir, 'real'), 'real bytes');
  await copyEngineOutput(join(jobDir, 'real'), join(root, 'dest'), job(), 'libreoffice');
  assert.equal(await readFile(join(root, 'dest'), 'utf8'), 'real bytes');
});

// Issue 45: where engines run as a user of their own, what an engine hands over must be that
// user's. An engine cannot make a file of the service's uid, but it can rename one the
// service made in its folder (an input, an earlier step's output) to where its output is
// expected; the guard took any file of the service's uid. Files the service itself wrote
// there (in-process steps: sharp, the workers, text it assembles) are still taken.
test('a file of the service\'s that an engine moved to its output is refused; what the service wrote, or the engine made, is taken (#45)', async () => {
  const engineUid = sandboxCapabilities().sandbox_uid;
  assert.ok(engineUid !== null && engineUid !== process.getuid?.(), 'engines run as a user of their own here (as root: nobody)');
  const dir = await scratchDir('conv-outguard-engine-');
  const own = { dir, onSecurityEvent: (e: SecurityEvent) => events.push(e) };
  try {
    await writeJobFile(join(dir, 'source.txt'), 'the service wrote this');
    // The engine, sandboxed as its own user, renames the service's file to its output.
    const mv = await runSandboxed('/bin/mv', ['source.txt', 'out.txt'], { cwd: dir, timeoutMs: 10_000 });
    assert.equal(mv.exitCode, 0, mv.stderr);
    const before = events.length;
    await assert.rejects(acceptEngineOutput(join(dir, 'out.txt'), own, 'pandoc'), (e: unknown) => {
      assert.ok(e instanceof UnsafeOutputError, String(e));
      assert.equal(e.event.kind, 'foreign_owner');
      assert.match(e.event.detail, /owned by the service/);
      return true;
    });
    assert.equal(events.length, before + 1, 'one security event');
    // What the engine made itself is its user's, and taken.
    const made = await runSandboxed('/bin/sh', ['-c', 'echo engine > made.txt'], { cwd: dir, timeoutMs: 10_000 });
    assert.equal(made.exitCode, 0, made.stderr);
    assert.equal(await acceptEngineOutput(join(dir, 'made.txt'), own, 'pandoc'), 7);
    // What the service wrote itself, in-process, is taken: through writeJobFile, and by libvips.
    await writeJobFile(join(dir, 'assembled.txt'), 'merged text');
    assert.equal(await readEngineText(join(dir, 'assembled.txt'), own, 'tesseract'), 'merged text');
    await sharp({ create: { width: 4, height: 4, channels: 3, background: '#1f6feb' } }).png().toFile(join(dir, 'step0.png'));
    assert.ok((await acceptEngineOutput(join(dir, 'step0.png'), own, 'sharp')) > 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
