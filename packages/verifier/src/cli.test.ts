import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('./cli.js', import.meta.url));

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('verify CLI against the loopback rig', () => {
  let rig: RigHandle;
  let smtpArgs: string[];
  before(async () => {
    rig = await useRig();
    smtpArgs = ['--dns-server', rig.dnsServer, '--smtp', '--helo', 'probe.mailconv.test', '--from', 'probe@mailconv.test', '--smtp-port', String(rig.smtpPort), '--allow-private', '--restrict-to', '127.0.0.0/8'];
  });
  after(async () => rig.release());

  test('--smtp --json: one VerificationResult per line, in input order, email as given', async () => {
    const addresses = [`Alice@${D.valid}`, `nobody@${D.valid}`, `x@${D.nxdomain}`, `anyone@${D.catchAll}`, 'not-an-address'];
    const r = await cli([...smtpArgs, '--json', ...addresses]);
    assert.equal(r.code, 0, r.stderr);
    const results = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { email: string; status: string; reason: string | null; checks: { smtp: boolean | null; catch_all: boolean | null } });
    assert.deepEqual(results.map((x) => x.email), addresses);
    assert.deepEqual(results.map((x) => [x.status, x.reason]), [
      ['valid', null],
      ['invalid', 'user_unknown'],
      ['invalid', 'domain_not_found'],
      ['risky', 'catch_all'],
      ['invalid', 'invalid_syntax'],
    ]);
    assert.equal(results[0]!.checks.smtp, true);
    assert.equal(results[0]!.checks.catch_all, false, '--smtp runs the catch-all probe too');
  });

  test('--file streams addresses (blank lines skipped) and prints them in order; human output by default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verify-cli-'));
    const file = join(dir, 'list.txt');
    const list = Array.from({ length: 120 }, (_, i) => (i % 3 === 0 ? `u${i}@${D.aOnly}` : i % 3 === 1 ? `u${i}@${D.nullMx}` : `u${i}@gmial.com`));
    writeFileSync(file, list.join('\n') + '\n\n');
    const r = await cli(['--dns-server', rig.dnsServer, '--concurrency', '7', '--file', file]);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    assert.deepEqual(rows.map((x) => x[0]), list);
    assert.equal(rows[0]![1], 'valid');
    assert.deepEqual([rows[1]![1], rows[1]![3]], ['invalid', 'domain_no_mx']);
    assert.match(rows[2]![3] ?? '', /did you mean u2@gmail\.com\?/);
  });

  test('bad arguments: a clear message and exit 2; a missing file: exit 1', async () => {
    for (const args of [[], ['--smtp', 'a@b.test'], ['--dns-server', 'localhost', 'a@b.test'], ['--bogus', 'a@b.test'], ['--concurrency', '0', 'a@b.test'], ['a@b.test', '--file', 'x']]) {
      const r = await cli(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /^verify: .+\n\nUsage: npm run verify/);
      assert.equal(r.stdout, '');
    }
    const missing = await cli(['--dns-server', rig.dnsServer, '--file', '/nonexistent/list.txt']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read \/nonexistent\/list\.txt/);
  });
});
