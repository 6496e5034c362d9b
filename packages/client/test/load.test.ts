// Load (issue #15): 20 s of mixed traffic against both services running as real processes on
// loopback — single checks, batches, job submissions and polls on the email service (DNS from
// the test rig), png → webp conversions and their polls on the conversion service — from the
// very script `npm run bench:load` runs (bench/load.mjs, the platform's bounded load
// generator). Prints throughput, p50/p99 and errors per request kind; the JSON summary goes
// to bench/results/ (git-ignored). Asserts that every answer was an expected status or a
// documented 429, that every job submitted completed, and that both services still answer.
// Bounded: the generator gets 256 MB of heap, each service 512 MB; the script kills everything
// 3 minutes past its duration and this test gives up a little later. About 40 s in all. The
// suite runs 20 s (issue 44: the statuses, the 429s and the jobs are all there by then, and
// 60 s held both cores from every other test for a minute); `npm run bench:load` runs 60 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './services.test-support.js';

/** LOAD_TEST_DURATION_S changes a local run; the suite's run is 20 s. */
const DURATION_S = Number(process.env.LOAD_TEST_DURATION_S ?? 20);

interface Summary {
  kinds: Record<string, { requests: number; rps: number; p50: number; p99: number; errors: number; unexpected: number; limited: number; statuses: Record<string, number>; firstProblem?: string }>;
  jobs: { submitted: number; completed: number };
  health_after: { email: number; convert: number };
}

test(`${DURATION_S} s of mixed traffic on both services: only expected statuses or documented 429s`, { timeout: (DURATION_S + 240) * 1000 }, async () => {
  const child = spawn(process.execPath, ['--max-old-space-size=256', join(ROOT, 'bench', 'load.mjs')], {
    cwd: ROOT,
    // Eight email connections: enough to saturate the 2 cores the whole suite shares.
    env: { ...process.env, LOAD_DURATION_S: String(DURATION_S), LOAD_EMAIL_CONNECTIONS: '8', LOAD_CONVERT_CONNECTIONS: '2' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let summary: Summary | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('LOAD_SUMMARY ')) summary = JSON.parse(line.slice('LOAD_SUMMARY '.length)) as Summary;
    else console.log(`# ${line}`);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.ok(summary, 'the load script printed its summary');
  for (const [kind, f] of Object.entries(summary.kinds)) {
    assert.ok(f.requests > 0, `${kind}: some requests were sent`);
    assert.equal(f.errors, 0, `${kind}: no network errors or time-outs (${f.firstProblem ?? ''})`);
    assert.equal(f.unexpected, 0, `${kind}: no status other than the expected ones or a documented 429 (${f.firstProblem ?? ''})`);
  }
  // The free-plan key went over its 60 requests a minute: refused with documented 429s, not errors.
  const limited = summary.kinds['email account (60 rpm)'];
  assert.ok(limited && limited.limited > 0 && (limited.statuses['200'] ?? 0) > 0, 'the rate-limited key got both answers and documented 429s');
  assert.ok(summary.jobs.submitted > 0, 'jobs were submitted');
  assert.equal(summary.jobs.completed, summary.jobs.submitted, 'every job submitted during the run completed');
  assert.deepEqual(summary.health_after, { email: 200, convert: 200 });
  assert.equal(code, 0, 'the load script exited cleanly');
});
