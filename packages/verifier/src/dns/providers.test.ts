import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mxGrade } from './mx-grade.js';
import { MAIL_PROVIDERS, classifyMxHost, mxProviderLabel, registrableDomain } from './providers.js';

test('MX host names map to their provider, the most specific suffix winning', () => {
  const cases: Array<[string, string | null]> = [
    ['aspmx.l.google.com.', 'google'],
    ['ALT2.ASPMX.L.GOOGLE.COM', 'google'],
    ['contoso-com.mail.protection.outlook.com', 'microsoft365'],
    ['hotmail-com.olc.protection.outlook.com', 'outlook'],
    ['mta6.am0.yahoodns.net', 'yahoo'],
    ['mx-aol.mail.gm0.yahoodns.net', 'yahoo'],
    ['mx.zoho.eu', 'zoho'],
    ['mx01.mail.icloud.com', 'icloud'],
    ['mailsec.protonmail.ch', 'proton'],
    ['mx.yandex.net', 'yandex'],
    ['eu-smtp-inbound-1.mimecast.com', 'mimecast'],
    ['mx0a-00123456.pphosted.com', 'proofpoint'],
    ['d123456a.ess.barracudanetworks.com', 'barracuda'],
    ['mx.example.org', null],
    // A look-alike must not match: suffixes match whole labels only.
    ['evilgoogle.com', null],
  ];
  for (const [host, id] of cases) assert.equal(classifyMxHost(host)?.id ?? null, id, host);
});

test('provider ids are unique and every suffix belongs to one provider', () => {
  const ids = MAIL_PROVIDERS.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  const suffixes = MAIL_PROVIDERS.flatMap((p) => p.suffixes);
  assert.equal(new Set(suffixes).size, suffixes.length);
});

test('mx grade follows decision 11', () => {
  const at = (exchange: string) => ({ exchange, priority: 10, provider: classifyMxHost(exchange)?.id ?? null });
  assert.equal(mxGrade('mx', [at('aspmx.l.google.com'), at('alt1.aspmx.l.google.com')]), 'A');
  assert.equal(mxGrade('mx', [at('aspmx.l.google.com'), at('mx.example.org')]), 'B');
  assert.equal(mxGrade('mx', [at('mx1.example.org'), at('mx2.example.org')]), 'B');
  assert.equal(mxGrade('mx', [at('aspmx.l.google.com')]), 'C');
  assert.equal(mxGrade('implicit_mx', [at('example.org')]), 'D');
  assert.equal(mxGrade('null_mx', []), 'F');
  assert.equal(mxGrade('no_mail_host', []), 'F');
  assert.equal(mxGrade('not_found', []), 'F');
  assert.equal(mxGrade('error', []), null);
});

// Issue #15: SMTP probe metrics are labelled by provider, with bounded cardinality.
test('metrics name an MX host by its provider, else its registrable domain, else none', () => {
  assert.equal(registrableDomain('mx1.mail.example.org.'), 'example.org');
  assert.equal(registrableDomain('MX.Example.CO.UK'), 'example.co.uk');
  assert.equal(registrableDomain('a.b.example.com.au'), 'example.com.au');
  assert.equal(registrableDomain('mx.example.io'), 'example.io');
  assert.equal(registrableDomain('localhost'), 'localhost');
  assert.equal(mxProviderLabel('google', 'whatever.example'), 'google');
  assert.equal(mxProviderLabel(null, 'eu-smtp-inbound-1.mimecast.com'), 'mimecast');
  assert.equal(mxProviderLabel(null, 'mx2.hosting.example.net'), 'example.net');
  assert.equal(mxProviderLabel(null, null), 'none');
});
