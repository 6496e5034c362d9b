import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertAnswersMatchDocument, createTestDatabase, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, SELF_CHECK, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { runSmtpCheckCommand } from './smtp-check.command.js';

// Issue 23: the SMTP self-check in the service (/readyz, /metrics, the log, verifications)
// and in `smtp-check`, on the loopback rig. Egress addresses are in the rig's /24; the
// block-list zones and PTR records come from the rig's DNS; nothing leaves loopback.
const json = { 'content-type': 'application/json' };

function rigEnv(rig: RigHandle, extra: Record<string, string> = {}): Record<string, string> {
  return {
    EMAIL_LOG_LEVEL: 'info',
    EMAIL_DNS_SERVERS: rig.dnsServer,
    EMAIL_DNS_TIMEOUT_MS: '1000',
    EMAIL_SMTP_HELO: 'probe.mailconv.test',
    EMAIL_SMTP_FROM: 'probe@mailconv.test',
    EMAIL_SMTP_ALLOW_PRIVATE: 'true',
    EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
    EMAIL_SMTP_PORT: String(rig.smtpPort),
    EMAIL_SMTP_SOURCE_ADDRESSES: `${rig.subnet}.${SELF_CHECK.good.octet}=${SELF_CHECK.good.helo}`,
    EMAIL_SMTP_BLOCKLISTS: SELF_CHECK.blocklists.join(','),
    EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
    ...extra,
  };
}

for (const backend of testBackends()) {
  describe(`SMTP self-check in the service on ${backend} (issue 23)`, () => {
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let url: string;
    let admin: ServiceCore<EmailTables>;
    let key: string;
    const answers: RecordedAnswer[] = [];
    const apps: ServiceApp[] = [];

    before(async () => {
      rig = await useRig();
      const db = await createTestDatabase(backend);
      drop = db.drop;
      url = db.url;
      admin = await openServiceCore<EmailTables>({ database: loadEmailConfig({ EMAIL_DATABASE_URL: url }).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      const r = await admin.accounts.createAccount({ email: 'scale@example.test', plan: 'scale' });
      assert.ok(r.ok);
      key = r.apiKey;
    });
    after(async () => {
      for (const app of apps) await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    /** An app on the rig, its log lines, and `/readyz` once its first self-check has finished. */
    async function start(extra: Record<string, string>) {
      const lines: string[] = [];
      const logStream = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
      const app = await buildApp(loadEmailConfig({ ...rigEnv(rig, extra), EMAIL_DATABASE_URL: url }), { logStream });
      apps.push(app);
      recordAnswers(app, answers);
      let ready = await app.inject({ method: 'GET', url: '/readyz' });
      for (let i = 0; i < 100 && ready.json().smtp?.status === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        ready = await app.inject({ method: 'GET', url: '/readyz' });
      }
      return { app, lines, ready };
    }

    test('port 25 closed: /readyz stays 200 and says why, use_smtp answers smtp_unavailable at once, /metrics and the log say so', async () => {
      const { app, lines, ready } = await start({ EMAIL_SMTP_PROBE_HOST: `${rig.hosts.dead}:${rig.smtpPort}`, EMAIL_PUBLIC_SMTP_PER_DAY: '1' });
      assert.equal(ready.statusCode, 200, 'the service still verifies without SMTP');
      const smtp = ready.json().smtp;
      assert.equal(smtp.status, 'unavailable');
      assert.match(smtp.reason, /no egress reaches port/);
      assert.equal(smtp.egresses[0].port25.status, 'closed');
      assert.equal(smtp.egresses[0].fcrdns.status, 'pass');

      // The tarpit MX would hold a probe for the command time-out (30 s); unavailable answers at once.
      const started = Date.now();
      const res = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { ...json, authorization: `Bearer ${key}` }, payload: JSON.stringify({ email: `alice@${D.slow}`, use_smtp: true }) });
      const ms = Date.now() - started;
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.status, 'unknown');
      assert.equal(body.reason, 'smtp_unavailable');
      assert.equal(body.checks.smtp, null);
      assert.equal(body.checks.dns, true);
      assert.ok(ms < 1000, `answered in ${ms} ms`);

      // The public endpoint makes no probe either, so the day's one SMTP probe is not used up.
      for (let i = 0; i < 3; i++) {
        const pub = await app.inject({ method: 'POST', url: '/api/validate-email', headers: json, payload: JSON.stringify({ email: `bob@${D.valid}`, use_smtp: true }) });
        assert.equal(pub.statusCode, 200, pub.body);
        assert.equal(pub.json().reason, 'smtp_unavailable');
      }

      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /^email_smtp_available 0$/m);
      assert.match(metrics, /^email_smtp_self_check\{egress="source:[\d.]+",check="port25",result="closed"\} 1$/m);
      assert.match(metrics, /^email_verifications_total\{status="unknown",reason="smtp_unavailable"\} 4$/m);
      assert.ok(lines.some((l) => /"event":"smtp_unavailable"/.test(l) && /SMTP probing unavailable: no egress reaches port/.test(l)), lines.join(''));
    });

    test('port 25 open through the egress: available, probing works, listed and FCrDNS results shown', async () => {
      const { app, ready } = await start({
        EMAIL_SMTP_PROBE_HOST: `${rig.hosts.postfix}:${rig.smtpPort}`,
        EMAIL_SMTP_SOURCE_ADDRESSES: `${rig.subnet}.${SELF_CHECK.listed.octet}=${SELF_CHECK.listed.helo}`,
      });
      const smtp = ready.json().smtp;
      assert.equal(smtp.status, 'available');
      assert.equal(smtp.egresses[0].starttls, 'offered');
      assert.deepEqual(smtp.egresses[0].blocklists.map((l: { status: string }) => l.status), ['listed', 'not_listed']);
      const res = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { ...json, authorization: `Bearer ${key}` }, payload: JSON.stringify({ email: `alice@${D.valid}`, use_smtp: true }) });
      assert.equal(res.json().status, 'valid', res.body);
      assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^email_smtp_available 1$/m);
    });

    test('recovery: a later self-check that finds port 25 open makes probing available again, and the log says so', async () => {
      // A port on loopback where nothing listens yet; then a minimal SMTP greeter opens on it.
      const holder = createServer();
      await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
      const port = (holder.address() as AddressInfo).port;
      await new Promise<void>((r) => holder.close(() => r()));
      const { app, lines, ready } = await start({ EMAIL_SMTP_PROBE_HOST: `127.0.0.1:${port}`, EMAIL_SMTP_CHECK_INTERVAL_MS: '200' });
      assert.equal(ready.json().smtp.status, 'unavailable');
      let greeter: Server | null = null;
      try {
        greeter = createServer((socket) => {
          socket.write('220 probe.example.test ESMTP\r\n');
          socket.on('data', (b: Buffer) => {
            for (const line of b.toString().split('\r\n').filter(Boolean)) socket.write(/^QUIT/i.test(line) ? '221 bye\r\n' : '250 probe.example.test\r\n');
          });
          socket.on('error', () => socket.destroy());
        });
        await new Promise<void>((r) => greeter!.listen(port, '127.0.0.1', r));
        let status = 'unavailable';
        for (let i = 0; i < 100 && status !== 'available'; i++) {
          await new Promise((r) => setTimeout(r, 50));
          status = (await app.inject({ method: 'GET', url: '/readyz' })).json().smtp.status;
        }
        assert.equal(status, 'available');
        const res = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { ...json, authorization: `Bearer ${key}` }, payload: JSON.stringify({ email: `alice@${D.valid}`, use_smtp: true }) });
        assert.equal(res.json().status, 'valid', 'probes run again');
        assert.ok(lines.some((l) => /"event":"smtp_available"/.test(l)), 'the log says probing is available again');
      } finally {
        await new Promise<void>((r) => (greeter ? greeter.close(() => r()) : r()));
      }
    });

    test('smtp-check prints the check and exits 1 when port 25 is closed, 0 when open', async () => {
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
      const closed = await runSmtpCheckCommand([], { ...rigEnv(rig, { EMAIL_SMTP_PROBE_HOST: `${rig.hosts.dead}:${rig.smtpPort}` }), EMAIL_DATABASE_URL: url }, io);
      assert.equal(closed, 1, err.join('\n'));
      assert.match(out[0] ?? '', /port 25 {5}CLOSED \(connection refused\)/);
      assert.match(out[0] ?? '', /SMTP probing: UNAVAILABLE: no egress reaches port/);
      const open = await runSmtpCheckCommand(['--json'], { ...rigEnv(rig, { EMAIL_SMTP_PROBE_HOST: `${rig.hosts.postfix}:${rig.smtpPort}` }), EMAIL_DATABASE_URL: url }, io);
      assert.equal(open, 0);
      assert.equal(JSON.parse(out[1] ?? '').available, true);
      assert.equal(await runSmtpCheckCommand([], { EMAIL_DATABASE_URL: url }, io), 2, 'SMTP probing not configured');
    });

    test('the admin CLI routes smtp-check to it and lists it in its help', () => {
      const admin = fileURLToPath(new URL('./admin.js', import.meta.url));
      const help = spawnSync(process.execPath, [admin, 'help'], { env: { PATH: process.env.PATH ?? '', EMAIL_DATABASE_URL: url }, encoding: 'utf8', timeout: 30_000 });
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, /smtp-check \[--json\]/);
      const env = { PATH: process.env.PATH ?? '', ...rigEnv(rig, { EMAIL_SMTP_PROBE_HOST: `${rig.hosts.dead}:${rig.smtpPort}` }), EMAIL_DATABASE_URL: url };
      const check = spawnSync(process.execPath, [admin, 'smtp-check'], { env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(check.status, 1, check.stderr);
      assert.match(check.stdout, /SMTP probing: UNAVAILABLE/);
    });

    test('without SMTP probing /readyz has smtp: null', async () => {
      const app = await buildApp(loadEmailConfig({ EMAIL_DATABASE_URL: url, EMAIL_LOG_LEVEL: 'silent', EMAIL_DNS_SERVERS: rig.dnsServer }));
      apps.push(app);
      recordAnswers(app, answers);
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.json().smtp, null);
    });

    test('every answer matches the OpenAPI document', async () => {
      assert.ok(apps[0]);
      await assertAnswersMatchDocument(apps[0], answers);
    });
  });
}
