import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EmailClient } from '@mailconv/client';
import { freePort, testBackends, testRedisUrl } from '@mailconv/platform/testing';
import { D } from '@mailconv/test-rig';
import { createAccount, FIXTURES, ROOT, startConvertService, startEmailService, type RunningService } from './services.test-support.js';
import { extractSnippets, missingKeys, rewrite, type Snippet } from './docs-snippets.test-support.js';

/*
 * Every code block of the opted-in markdown files is classified (docs-snippets.test-support.ts
 * says how) and every `run` block is executed as written (issue 30, item 4), in file order, the
 * blocks of one file sharing one temporary folder:
 *
 * - `sh` by `bash -euo pipefail`; `js`/`ts` by node (Node strips the types) as a module that
 *   resolves `@mailconv/client` (the folder has node_modules/@mailconv/client and
 *   node_modules/.bin/mailconv linked to this package, as after an install; npx is run offline
 *   with its registry on a dead loopback port).
 * - Loopback stand-ins for the outside world: both services run in this process on free
 *   127.0.0.1 ports (SQLite or PostgreSQL test databases; email DNS and SMTP through the
 *   loopback rig; conversion URL fetches and DNS fenced to loopback) and the snippets'
 *   http://127.0.0.1:8080 and :8081 (the ports `npm start` uses) are rewritten to them;
 *   https://example.com/ is rewritten to a page server on 127.0.0.2 that serves `/` (an HTML
 *   page), `/report.pdf` and `/a.docx`.
 * - The environment has EMAIL_KEY and CONVERT_KEY (keys of the owner@localhost accounts,
 *   made with the admin CLI, as `npm start` prints them; `ev_live_…`/`cv_live_…` in a block
 *   are those keys) and EMAIL_DB/CONVERT_DB (unique names for the PostgreSQL set-up of
 *   operations.md; dropped afterwards; the README's `mailconv_email`/`mailconv_convert` are
 *   renamed alike, its Redis URLs point at the suites' Redis database).
 * - Blocks noted `(in the checkout)` run from the repository's root (npm scripts: admin,
 *   `start -w`, `worker -w`), with the admin CLI on the test services' databases; services
 *   they start keep their state in a temporary folder, resolve on loopback and are fenced
 *   to loopback. Whatever a block leaves running in the background is killed after it.
 * - Sample inputs the snippets name are put in the folder first: list.csv (addresses on the
 *   rig's domains), report.docx and papers.zip (from the converter's fixtures), my-site/ and
 *   docs/examples/invoice.html (the repository's invoice page).
 * - A run block fails on a non-zero exit, on its time limit (90 s) and when it prints an API
 *   error body; an `output` block's JSON keys must be in what its run block printed.
 * - `server` blocks have an exerciser below (the README's webhook receiver: the email service
 *   delivers a signed webhook to it).
 * - DOCS_SNIPPETS_SHOW=1 prints what each run block printed.
 */

interface DocFile {
  path: string;
  /** Only the blocks under these `##` headings (a file opted in part by part). */
  sections?: string[];
}

const FILES: DocFile[] = [
  ...(await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).sort().map((f) => ({ path: `docs/${f}` })),
  { path: 'packages/client/README.md' },
  { path: 'README.md' },
];

const BLOCK_LIMIT_MS = 90_000;
const SUFFIX = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_NAMES = { EMAIL_DB: `mailconv_email_docs_${SUFFIX}`, CONVERT_DB: `mailconv_convert_docs_${SUFFIX}` };
/** The README's one-machine databases (`createdb mailconv_email`, …), renamed for this run and dropped afterwards. */
const README_DBS = { mailconv_email: `mailconv_email_readme_${SUFFIX}`, mailconv_convert: `mailconv_convert_readme_${SUFFIX}` };
const usePostgres = testBackends().includes('postgres');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command in its own process group; the group is killed at the time limit, and what
 * it left running in the background (`… &` not waited for) when it is done.
 */
function runProcess(cmd: string, args: string[], cwd: string, env: Record<string, string>): { child: ChildProcess; done: Promise<Ran> } {
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Ran>((resolve) => {
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), BLOCK_LIMIT_MS);
    let exitCode: number | null = null;
    // When the block's shell is done, whatever it left in the background goes too (and with
    // it the pipes it held open, so 'close' comes at once).
    child.on('exit', (code) => {
      exitCode = code;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // nothing left in the group
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: exitCode ?? code, stdout, stderr });
    });
  });
  return { child, done };
}

/** The file a block is written to and the command that runs it. */
function command(snippet: Snippet): { file: string; cmd: string; args: string[] } {
  const file = `snippet-${snippet.line}`;
  if (snippet.lang === 'sh' || snippet.lang === 'bash') return { file: `${file}.sh`, cmd: 'bash', args: ['-euo', 'pipefail', `${file}.sh`] };
  if (snippet.lang === 'js') return { file: `${file}.mjs`, cmd: process.execPath, args: [`${file}.mjs`] };
  if (snippet.lang === 'ts') return { file: `${file}.mts`, cmd: process.execPath, args: [`${file}.mts`] };
  throw new Error(`${snippet.file}:${snippet.line}: no way to run a \`${snippet.lang || 'plain'}\` block; mark it fragment or output`);
}

interface ServerContext {
  email: RunningService;
  /** Starts the block with extra environment; killed by the exerciser. */
  start(extra: Record<string, string>): { child: ChildProcess; done: Promise<Ran> };
}

/** Polls `check` until it holds; fails after 30 s. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const until = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const SERVERS: Record<string, (ctx: ServerContext) => Promise<void>> = {
  /** The README's receiver: refuses a bad signature, takes a good one once per delivery id, and receives a real batch.completed. */
  'README.md#Webhooks': async ({ email, start }) => {
    const key = createAccount('email-api', email.env, `hooks-${SUFFIX}@example.test`, 'scale');
    const client = new EmailClient({ baseUrl: email.url, apiKey: key });
    const port = await freePort();
    const hooks = `http://127.0.0.1:${port}/hooks/email`;
    const { webhook } = await client.webhooks.create({ url: hooks, events: 'batch.completed' });
    const secret = webhook.secret;
    assert.ok(secret);
    const receiver = start({ PORT: String(port), WEBHOOK_SECRET: secret });
    let stdout = '';
    receiver.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      await waitFor('the receiver to listen', () => fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false));
      const body = JSON.stringify({ event: 'test.ping', timestamp: new Date().toISOString() });
      const post = (signature: string) =>
        fetch(hooks, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signature, 'x-service-delivery': 'dlv_docs_test' } });
      assert.equal((await post(`sha256=${createHmac('sha256', 'not-the-secret').update(body).digest('hex')}`)).status, 401);
      const good = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      assert.equal((await post(good)).status, 204);
      assert.equal((await post(good)).status, 204); // a repeat: answered, handled once
      await client.verifyBatch([`alice@${D.valid}`, `x@${D.nxdomain}`]);
      await waitFor('batch.completed at the receiver', () => /batch\.completed/.test(stdout));
      assert.equal(stdout.match(/dlv_docs_test test\.ping/g)?.length, 1, stdout);
      assert.match(stdout, /^dlv_\S+ batch\.completed$/m);
    } finally {
      process.kill(-receiver.child.pid!, 'SIGTERM');
      await receiver.done;
      await client.webhooks.remove(webhook.webhook_id).catch(() => undefined);
    }
  },
};

test('the classification: unmarked blocks, fragments without a reason and stray output blocks are reported with file and line', () => {
  const md = ['# T', '', '```sh', 'echo 1', '```', '', '<!-- snippet: fragment -->', '```sh', 'x', '```', '', '<!-- snippet: output -->', '```json', '{}', '```', ''].join('\n');
  assert.deepEqual(extractSnippets('x.md', md).problems.map((p) => p.split(': ')[0]), ['x.md:3', 'x.md:8', 'x.md:13']);
  assert.deepEqual(missingKeys('{"a": 1, "b": {"c": …}}', '{"a":2,"c":3}'), ['b']);
});

describe('the code blocks of README.md and docs/, run as written against loopback stand-ins', () => {
  let email: RunningService;
  let conv: RunningService;
  let pages: Server;
  let stand: Record<string, string>;
  let env: Record<string, string>;
  const folders: string[] = [];

  before(async () => {
    [email, conv] = await Promise.all([startEmailService(), startConvertService({ CONVERT_DNS_SERVERS: '127.0.0.1:9' })]);
    pages = createServer((req, res) => {
      const files: Record<string, [string, string]> = {
        '/report.pdf': [join(ROOT, 'packages/converter/test/corpus/pdf/qpdf-boxes-flattened.pdf'), 'application/pdf'],
        '/a.docx': [join(FIXTURES, 'sample.docx'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
      };
      const file = files[req.url ?? ''];
      if (file) return void readFile(file[0]).then((body) => res.writeHead(200, { 'content-type': file[1] }).end(body));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Example Domain</title><h1>Example Domain</h1><p>A loopback stand-in.</p>');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.2', resolve));
    // The owner accounts `npm start` makes, with the keys it prints.
    const keys = { EMAIL_KEY: createAccount('email-api', email.env, 'owner@localhost', 'scale'), CONVERT_KEY: createAccount('convert-api', conv.env, 'owner@localhost', 'api') };
    const local = await mkdtemp(join(tmpdir(), 'docs-snippets-local-'));
    folders.push(local);
    stand = {
      'http://127.0.0.1:8080': email.url,
      'http://127.0.0.1:8081': conv.url,
      'https://example.com/': `http://127.0.0.2:${(pages.address() as AddressInfo).port}/`,
      // "the keys printed above"
      'ev_live_…': keys.EMAIL_KEY,
      'cv_live_…': keys.CONVERT_KEY,
      ...README_DBS,
      // The suites' Redis database, and no folder inside the checkout.
      'redis://127.0.0.1:6379/0': testRedisUrl(),
      'redis://127.0.0.1:6379/1': testRedisUrl(),
      '$PWD/data/convert-shared': join(local, 'convert-shared'),
    };
    env = {
      // This Node first: npx and the CLI run on it.
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      ...keys,
      ...PG_NAMES,
      // The admin CLI of blocks run in the checkout works on the test services' databases.
      EMAIL_DATABASE_URL: email.env.EMAIL_DATABASE_URL!,
      CONVERT_DATABASE_URL: conv.env.CONVERT_DATABASE_URL!,
      // Services a block starts keep their state in a temporary folder (never the checkout's
      // data/), look names up on loopback only and reach nothing beyond loopback.
      EMAIL_DATA_DIR: join(local, 'email'),
      CONVERT_DATA_DIR: join(local, 'convert'),
      MAILCONV_PID_FILE: join(local, 'npm-start.pid'),
      EMAIL_LOG_LEVEL: 'warn',
      CONVERT_LOG_LEVEL: 'warn',
      EMAIL_DNS_SERVERS: email.env.EMAIL_DNS_SERVERS!,
      EMAIL_DNS_TIMEOUT_MS: '150',
      EMAIL_SMTP_HELO: 'probe.mailconv.test',
      EMAIL_SMTP_FROM: 'probe@mailconv.test',
      EMAIL_SMTP_ALLOW_PRIVATE: 'true',
      EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
      EMAIL_SMTP_PORT: email.env.EMAIL_SMTP_PORT!,
      EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
      EMAIL_JOBS_QUEUE: `docs-email-${SUFFIX}`,
      CONVERT_DNS_SERVERS: '127.0.0.1:9',
      CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128',
      CONVERT_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
      CONVERT_QUEUE: `docs-convert-${SUFFIX}`,
      npm_config_offline: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_update_notifier: 'false',
      npm_config_fund: 'false',
      npm_config_audit: 'false',
    };
  });

  after(async () => {
    pages?.closeAllConnections();
    await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(null)));
    await Promise.all([email?.close(), conv?.close()]);
    if (usePostgres) {
      // One -c per statement: DROP DATABASE cannot run in the transaction one -c makes of several.
      const drops = [
        ...Object.values(PG_NAMES).flatMap((n) => ['-c', `DROP DATABASE IF EXISTS ${n} WITH (FORCE)`, '-c', `DROP ROLE IF EXISTS ${n}`]),
        ...Object.values(README_DBS).flatMap((n) => ['-c', `DROP DATABASE IF EXISTS ${n} WITH (FORCE)`]),
      ];
      const res = spawnSync('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-U', 'postgres', '-d', 'postgres', ...drops], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(res.status, 0, `dropping the operations.md databases and roles: ${res.stderr}`);
    }
    await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  });

  /** A folder for one file's blocks, with the sample inputs and the client package installed. */
  async function workFolder(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'docs-snippets-'));
    folders.push(dir);
    env.HOME = dir;
    await mkdir(join(dir, 'node_modules', '@mailconv'), { recursive: true });
    await mkdir(join(dir, 'node_modules', '.bin'));
    await symlink(join(ROOT, 'packages', 'client'), join(dir, 'node_modules', '@mailconv', 'client'));
    await symlink('../@mailconv/client/bin/mailconv.mjs', join(dir, 'node_modules', '.bin', 'mailconv'));
    await writeFile(join(dir, 'list.csv'), `email\r\n${['alice', 'bob', 'carol'].map((u) => `${u}@${D.valid}`).join('\r\n')}\r\nx@${D.nxdomain}\r\n`);
    await copyFile(join(FIXTURES, 'sample.docx'), join(dir, 'report.docx'));
    await cp(join(ROOT, 'docs', 'examples'), join(dir, 'docs', 'examples'), { recursive: true });
    await mkdir(join(dir, 'my-site'));
    await copyFile(join(ROOT, 'docs', 'examples', 'invoice.html'), join(dir, 'my-site', 'index.html'));
    const papers = join(dir, 'papers-src');
    await mkdir(join(papers, 'office'), { recursive: true });
    await mkdir(join(papers, 'misc'));
    await copyFile(join(FIXTURES, 'sample.docx'), join(papers, 'office', 'report.docx'));
    await copyFile(join(FIXTURES, 'sample.md'), join(papers, 'notes.md'));
    await writeFile(join(papers, 'misc', 'noise.bin'), Buffer.from([0, 1, 2, 0xfe]));
    execFileSync('zip', ['-q', '-r', join(dir, 'papers.zip'), '.'], { cwd: papers });
    await rm(papers, { recursive: true });
    return dir;
  }

  for (const doc of FILES) {
    const { snippets, problems } = extractSnippets(doc.path, readFileSync(join(ROOT, doc.path), 'utf8'), doc.sections);
    describe(doc.path, () => {
      let dir: string;
      let last: Ran | undefined;
      before(async () => (dir = await workFolder()));

      test(`every code block is classified (${snippets.length} blocks)`, () => {
        assert.deepEqual(problems, []);
      });

      for (const snippet of snippets) {
        const name = `${doc.path}:${snippet.line} ${snippet.kind} ${snippet.lang}${snippet.note ? ` (${snippet.note})` : ''}`;
        if (snippet.kind === 'fragment') continue;
        if (snippet.kind === 'output') {
          test(name, () => {
            assert.ok(last, 'the run block before it did not run');
            assert.deepEqual(missingKeys(snippet.code, last.stdout), [], `keys of the sample missing from what ${doc.path} printed:\n${last.stdout}`);
          });
          continue;
        }
        if (snippet.kind === 'server') {
          const exercise = SERVERS[`${doc.path}#${snippet.section}`];
          test(name, async () => {
            assert.ok(exercise, `no exerciser for the server block in ${doc.path} under "${snippet.section}"`);
            const { file, cmd, args } = command(snippet);
            await writeFile(join(dir, file), rewrite(snippet.code, stand));
            await exercise({ email, start: (extra) => runProcess(cmd, args, dir, { ...env, ...extra }) });
          });
          continue;
        }
        const needsPostgres = /\bpsql\b|\bcreatedb\b|postgres:\/\/postgres@127/.test(snippet.code);
        // `(in the checkout)`: npm scripts of the repository (admin, start -w, worker -w) run from its root.
        const inCheckout = /\bin the checkout\b/.test(snippet.note);
        test(name, { skip: needsPostgres && !usePostgres ? 'PostgreSQL is not a test backend here' : false }, async (t) => {
          last = undefined;
          const { file, cmd, args } = command(snippet);
          await writeFile(join(dir, file), rewrite(snippet.code, stand));
          const ran = await runProcess(cmd, inCheckout ? args.map((a) => (a === file ? join(dir, file) : a)) : args, inCheckout ? ROOT : dir, env).done;
          const shown = `exit ${ran.code}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`;
          if (process.env.DOCS_SNIPPETS_SHOW) t.diagnostic(shown); // what each block printed, for whoever writes the docs
          assert.equal(ran.code, 0, shown);
          assert.doesNotMatch(ran.stdout, /"error"\s*:\s*["{]/, `an API error in its output:\n${shown}`);
          last = ran;
        });
      }
    });
  }
});
