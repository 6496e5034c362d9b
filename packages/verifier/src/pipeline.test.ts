import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVerifier, type MailboxProber, type MailDomainResolver, type ProbeTarget } from './pipeline.js';
import { REASONS, type DnsOutcome, type SmtpOutcome } from './types.js';

// Small in-test implementations of the engine's own interfaces (the real ones live in
// src/dns and src/smtp and are tested against the loopback rig).
const google = (n: number): DnsOutcome => ({
  kind: 'mx',
  hosts: Array.from({ length: n }, (_, i) => ({ exchange: `alt${i}.aspmx.l.google.com`, priority: i * 10 })),
  providers: ['google'],
});
const zones: Record<string, DnsOutcome> = {
  'gmail.com': google(5),
  'example.com': { kind: 'mx', hosts: [{ exchange: 'mx.example.com', priority: 10 }], providers: [] },
  'xn--bcher-kva.example': { kind: 'implicit', hosts: [{ exchange: 'xn--bcher-kva.example', priority: 0 }], providers: [] },
  'nullmx.example': { kind: 'null_mx', hosts: [], providers: [] },
  'slow.example': { kind: 'error', hosts: [], providers: [], detail: 'timeout' },
  'mailinator.com': { kind: 'mx', hosts: [{ exchange: 'mail.mailinator.com', priority: 1 }], providers: [] },
  'sub.mailinator.com': { kind: 'mx', hosts: [{ exchange: 'mail.mailinator.com', priority: 1 }], providers: [] },
  'gmial.com': { kind: 'mx', hosts: [{ exchange: 'mx.gmial.com', priority: 1 }], providers: [] },
};
class TableResolver implements MailDomainResolver {
  readonly asked: string[] = [];
  resolveMail(domain: string): DnsOutcome | Promise<DnsOutcome> {
    this.asked.push(domain);
    if (domain === 'broken.example') return Promise.reject(new Error('resolver bug'));
    return zones[domain] ?? { kind: 'nxdomain', hosts: [], providers: [] };
  }
}
class TableProber implements MailboxProber {
  readonly targets: ProbeTarget[] = [];
  constructor(private readonly answers: Record<string, SmtpOutcome>) {}
  async probe(target: ProbeTarget, _dns: DnsOutcome, options: { catchAll: boolean }): Promise<SmtpOutcome> {
    this.targets.push(target);
    const a = this.answers[target.address] ?? { kind: 'rejected', catchAll: null, code: 550, enhanced: '5.1.1' };
    return options.catchAll ? a : { ...a, catchAll: null };
  }
}

test('offline: a clean gmail address is valid, normalised, with mx grade A and null smtp/catch_all', async () => {
  const v = createVerifier({ dns: new TableResolver() });
  const r = await v.verify(' John.Doe+news@Gmail.com ');
  assert.equal(r.email, ' John.Doe+news@Gmail.com ');
  assert.equal(r.normalized, 'john.doe@gmail.com');
  assert.equal(r.status, 'valid');
  assert.equal(r.is_valid, true);
  assert.equal(r.reason, null);
  assert.equal(r.suggestion, null);
  assert.deepEqual(r.checks, {
    syntax: true, dns: true, smtp: null, catch_all: null, is_disposable: false, disposable: false,
    role_based: false, free_provider: true, mx: { count: 5, providers: ['google'], grade: 'A' },
  });
});

test('offline: each failing stage gives its reason', async () => {
  const resolver = new TableResolver();
  const v = createVerifier({ dns: resolver });
  const cases: [string, string, string | null][] = [
    ['not an address', 'invalid', 'invalid_syntax'],
    ['a@nowhere.example', 'invalid', 'domain_not_found'],
    ['a@nullmx.example', 'invalid', 'domain_no_mx'],
    ['a@slow.example', 'unknown', 'dns_error'],
    ['a@broken.example', 'unknown', 'dns_error'],
    ['x@sub.mailinator.com', 'risky', 'disposable'],
    ['info@example.com', 'risky', 'role_based'],
    ['a@[192.0.2.1]', 'unknown', 'unverifiable'],
    ['josé@bücher.example', 'valid', null],
  ];
  for (const [email, status, reason] of cases) {
    const r = await v.verify(email);
    assert.equal(r.status, status, email);
    assert.equal(r.reason, reason, email);
  }
  // Bad syntax and IP literals never reach DNS; IDN domains are asked in punycode.
  assert.ok(!resolver.asked.some((d) => d.includes('[') || d.includes(' ')));
  assert.ok(resolver.asked.includes('xn--bcher-kva.example'));
});

test('typo suggestions keep the local part and lower the score of a live look-alike domain', async () => {
  const v = createVerifier({ dns: new TableResolver() });
  const r = await v.verify('Anna@gmial.com');
  assert.equal(r.suggestion, 'Anna@gmail.com');
  const clean = await v.verify('anna@example.com');
  assert.equal(clean.suggestion, null);
});

test('with SMTP: the prober gets the ASCII address and its outcome drives the verdict', async () => {
  const prober = new TableProber({
    'ok@gmail.com': { kind: 'accepted', catchAll: false, code: 250 },
    'any@example.com': { kind: 'accepted', catchAll: true, code: 250 },
    'full@example.com': { kind: 'full', catchAll: false, code: 552, enhanced: '5.2.2' },
    'grey@example.com': { kind: 'greylisted', catchAll: null, code: 451 },
  });
  const v = createVerifier({ dns: new TableResolver(), smtp: prober });
  const ok = await v.verify('ok@gmail.com', { smtp: true, catchAll: true });
  assert.equal(ok.status, 'valid');
  assert.equal(ok.checks.smtp, true);
  assert.equal(ok.checks.catch_all, false);
  assert.ok(ok.confidence > (await v.verify('ok@gmail.com')).confidence);
  assert.equal((await v.verify('any@example.com', { smtp: true, catchAll: true })).reason, 'catch_all');
  // Without the catch-all feature the probe does not answer it (decision 15).
  const noCatchAll = await v.verify('any@example.com', { smtp: true });
  assert.equal(noCatchAll.checks.catch_all, null);
  assert.equal(noCatchAll.status, 'valid');
  assert.equal((await v.verify('full@example.com', { smtp: true })).reason, 'mailbox_full');
  assert.equal((await v.verify('grey@example.com', { smtp: true })).reason, 'greylisted');
  const gone = await v.verify('gone@example.com', { smtp: true });
  assert.equal(gone.reason, 'user_unknown');
  assert.equal(gone.checks.smtp, false);
  // No probe for a domain that takes no mail.
  prober.targets.length = 0;
  await v.verify('a@nullmx.example', { smtp: true });
  assert.equal(prober.targets.length, 0);
});

test('every result carries a reason from the closed list, or null', async () => {
  const v = createVerifier({ dns: new TableResolver() });
  for (const email of ['a@gmail.com', 'bad', 'a@nowhere.example', 'x@mailinator.com']) {
    const r = await v.verify(email);
    assert.ok(r.reason === null || (REASONS as readonly string[]).includes(r.reason));
  }
});

test('inspect gives the evidence: the syntax sub-reason and the raw DNS and SMTP outcomes', async () => {
  const prober = new TableProber({ 'ok@gmail.com': { kind: 'accepted', catchAll: false, code: 250, enhanced: '2.1.5' } });
  const v = createVerifier({ dns: new TableResolver(), smtp: prober });
  const bad = await v.inspect('john..doe@example.com');
  assert.equal(bad.result.reason, 'invalid_syntax');
  assert.deepEqual(bad.syntax, { ok: false, error: 'consecutive_dots' });
  assert.equal(bad.dns, null);
  const ok = await v.inspect('ok@gmail.com', { smtp: true });
  assert.equal(ok.dns?.kind, 'mx');
  assert.equal(ok.smtp?.enhanced, '2.1.5');
  assert.deepEqual(ok.result, await v.verify('ok@gmail.com', { smtp: true }));
});
