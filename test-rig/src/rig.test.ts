import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { promises as dns } from 'node:dns';
import { D, REBIND_PUBLIC_ADDRESS, SOCKS_PASSWORD, SOCKS_USER, WEBHOOK_HOSTS, postfixCpuMs, useRig, webhookRecords, zoneHosts, type RigHandle } from './index.js';

// The rig's own guarantees: it answers from its zone only, and its Postfix never relays.
let rig: RigHandle;
before(async () => {
  rig = await useRig();
});
after(async () => {
  await rig.release();
});

/** One raw SMTP dialogue; returns every reply line. */
function dialogue(host: string, commands: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port: rig.smtpPort });
    const lines: string[] = [];
    let buffer = '';
    let replies = 0;
    socket.setTimeout(5000, () => socket.destroy(new Error('rig did not answer')));
    socket.on('data', (b) => {
      buffer += b.toString('latin1');
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        if (/^\d{3} /.test(line)) {
          const next = commands[replies++];
          if (next === undefined) socket.end();
          else socket.write(`${next}\r\n`);
        }
      }
    });
    socket.on('close', () => resolve(lines));
    socket.on('error', reject);
  });
}

test('every address of the rig is in its own loopback /24', () => {
  assert.match(rig.subnet, /^127\.\d+\.\d+$/);
  for (const address of Object.values(rig.hosts)) assert.ok(address.startsWith(`${rig.subnet}.`), address);
});

test('dnsmasq answers the zone and refuses to resolve anything else', async () => {
  const r = new dns.Resolver({ timeout: 500, tries: 1 });
  r.setServers([rig.dnsServer]);
  assert.deepEqual(await r.resolve4(`mx.${D.valid}`), [rig.hosts.postfix]);
  await assert.rejects(r.resolveMx('example.com'), (err: NodeJS.ErrnoException) => err.code === 'EREFUSED' || err.code === 'ENOTFOUND');
});

test('Postfix offers STARTTLS and refuses to relay to a domain outside the rig', async () => {
  const lines = await dialogue(rig.hosts.postfix, ['EHLO probe.rig.test', 'MAIL FROM:<probe@rig.test>', 'RCPT TO:<someone@example.com>', 'RCPT TO:<alice@valid.test>', 'QUIT']);
  assert.ok(lines.includes('250-STARTTLS'), lines.join('\n'));
  assert.ok(lines.some((l) => /^554 5\.7\.1 .*Relay access denied/.test(l)), lines.join('\n'));
  assert.ok(lines.includes('250 2.1.5 Ok'));
});

test('the SOCKS5 proxy wants the login and reaches only the rig', async () => {
  // One SOCKS5 exchange; returns the CONNECT reply code (or the auth status when refused there).
  const ask = (password: string, target: string) =>
    new Promise<number>((resolve, reject) => {
      const s = net.connect({ host: rig.socks.host, port: rig.socks.port });
      let step = 0;
      s.setTimeout(5000, () => s.destroy(new Error('proxy did not answer')));
      s.on('error', reject);
      s.on('data', (b) => {
        if (step === 0) {
          step = 1;
          const u = Buffer.from(SOCKS_USER);
          const p = Buffer.from(password);
          s.write(Buffer.concat([Buffer.from([0x01, u.length]), u, Buffer.from([p.length]), p]));
        } else if (step === 1) {
          if (b[1] !== 0x00) return resolve(-1);
          step = 2;
          s.write(Buffer.from([0x05, 0x01, 0x00, 0x01, ...target.split('.').map(Number), rig.smtpPort >> 8, rig.smtpPort & 0xff]));
        } else {
          s.destroy();
          resolve(b[1] ?? -2);
        }
      });
      s.write(Buffer.from([0x05, 0x01, 0x02]));
    });
  assert.equal(await ask('wrong', rig.hosts.postfix), -1);
  assert.equal(await ask(SOCKS_PASSWORD, rig.hosts.postfix), 0x00);
  assert.equal(await ask(SOCKS_PASSWORD, '127.0.0.1'), 0x02, 'outside the rig: not allowed by ruleset');
});

test('postfixCpuMs counts what the rig’s Postfix spends, including daemons it has reaped', async () => {
  const before = postfixCpuMs(rig.dir);
  assert.ok(Number.isFinite(before) && before >= 0);
  // The kernel charges CPU by clock tick (10 ms) to whichever process runs at the tick, so
  // give Postfix well over that to do: sessions of many recipients each (~0.1 ms per RCPT).
  const rcpts = Array.from({ length: 100 }, (_, i) => `RCPT TO:<${i % 2 ? 'alice' : 'bob'}@${D.valid}>`);
  for (let i = 0; i < 20; i++) await dialogue(rig.hosts.postfix, ['EHLO probe.rig.test', 'MAIL FROM:<probe@rig.test>', ...rcpts, 'RSET', 'QUIT']);
  const spent = postfixCpuMs(rig.dir) - before;
  assert.ok(spent > 0, `Postfix CPU did not move (${spent} ms)`);
  assert.throws(() => postfixCpuMs('/nonexistent'), /ENOENT/);
});

test('every address the zone answers is loopback, but the rebinding name\'s one refused public address', async () => {
  const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([rig.dnsServer]);
  const loopback = (a: string) => a.startsWith('127.') || a === '::1';
  const names = [...new Set([...zoneHosts().map((h) => h.host), ...webhookRecords().map((r) => r.host)])];
  for (const name of names) {
    const answers = [...(await resolver.resolve4(name).catch(() => [])), ...(await resolver.resolve6(name).catch(() => []))];
    assert.ok(answers.length > 0, name);
    const outside = answers.filter((a) => !loopback(a));
    assert.deepEqual(outside, name === WEBHOOK_HOSTS.rebind ? [REBIND_PUBLIC_ADDRESS] : [], name);
  }
  assert.deepEqual((await resolver.resolve4(WEBHOOK_HOSTS.rebind)).sort(), ['127.0.0.1', REBIND_PUBLIC_ADDRESS].sort());
});
