// `npm run bench:verify`: the offline verification pipeline (syntax, normalisation, lists,
// typo, DNS, verdict) over 1,000,000 generated addresses on one core, beside validator's
// `isEmail` alone over the same addresses as the baseline, in the same process.
// DNS is the engine's own: `createEngine` with the real `DnsResolver` and its TTL cache,
// asking a dnsmasq on loopback that serves the generated domains' MX records (needs the
// rig's Debian packages). Every domain is looked up once before the clock starts, so the
// measured run is answered from the resolver's cache, as a busy service's would be.
// Last line: `RESULT pipeline_per_s=… isemail_per_s=… ratio=…`.
// Target (issue 3): >= 250,000 addresses/s and faster than isEmail.
// Options: `--count N` (default 1,000,000), `--seed N`.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const COUNT = arg('count', 1_000_000);
const SEED = arg('seed', 20261121);

// Build the engine first (incremental: a no-op when dist/ is current).
const build = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(ROOT, 'packages', 'verifier')], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const { createEngine, POPULAR_DOMAINS } = await import('@mailconv/verifier');
const { default: isEmail } = await import('validator/lib/isEmail.js');

// Deterministic generator (mulberry32) so every run measures the same addresses.
let state = SEED >>> 0;
function rand() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (arr) => arr[Math.floor(rand() * arr.length)];
const FIRST = ['anna', 'john', 'maria', 'li', 'omar', 'sofia', 'lucas', 'emma', 'noah', 'mia', 'pierre', 'jürgen', 'aiko', 'raj', 'fatima', 'olga', 'diego', 'chloe', 'ivan', 'zoe'];
const LAST = ['smith', 'garcia', 'müller', 'rossi', 'dubois', 'kim', 'wang', 'silva', 'novak', 'jones', 'brown', 'nguyen', 'kowalski', 'jensen', 'ali', 'costa', 'tanaka', 'weber', 'lopez', 'martin'];
const WORDS = ['acme', 'blue', 'cloud', 'data', 'north', 'green', 'peak', 'bright', 'swift', 'atlas', 'nova', 'pixel', 'river', 'stone', 'forge', 'orbit', 'maple', 'lumen', 'vertex', 'harbor', 'quant', 'sol', 'terra', 'echo'];
const TLDS = ['com', 'com', 'com', 'net', 'org', 'de', 'io', 'co.uk', 'fr', 'nl', 'com.au', 'it', 'es'];
const ROLES = ['info', 'admin', 'sales', 'support', 'noreply', 'contact', 'billing'];
const TYPOS = ['gmial.com', 'gmai.com', 'hotmial.com', 'yaho.com', 'outlok.com', 'gmail.con', 'hotmail.co', 'iclod.com'];
const DISPOSABLE = ['mailinator.com', 'yopmail.com', 'guerrillamail.com', '10minutemail.com', 'trashmail.com'];
const BAD = ['john..doe@example.com', 'no-at-sign.example.com', 'john doe@example.com', '.lead@example.com', 'a@b', 'x@-bad.com', 'x@example.c', '"open@example.com'];
const COMPANIES = Array.from({ length: 20_000 }, (_, i) => `${pick(WORDS)}${pick(WORDS)}${i}.${pick(TLDS)}`);

function localPart() {
  const r = rand();
  const f = pick(FIRST);
  const l = pick(LAST);
  if (r < 0.4) return `${f}.${l}`;
  if (r < 0.6) return `${f}${Math.floor(rand() * 1000)}`;
  if (r < 0.75) return `${f[0]}${l}`;
  if (r < 0.85) return `${f}.${l}+news`;
  return `${f}_${l}${Math.floor(rand() * 100)}`;
}
function address() {
  const r = rand();
  if (r < 0.5) return `${localPart()}@${pick(POPULAR_DOMAINS.slice(0, 30))}`;
  if (r < 0.85) return `${localPart()}@${pick(COMPANIES)}`;
  if (r < 0.88) return `${pick(ROLES)}@${pick(COMPANIES)}`;
  if (r < 0.91) return `${localPart()}@${pick(TYPOS)}`;
  if (r < 0.94) return `${localPart()}@${pick(DISPOSABLE)}`;
  if (r < 0.96) return `${localPart()}@${pick(['bücher.de', 'münchen.de', 'café.fr'])}`;
  if (r < 0.99) return pick(BAD);
  return `  ${localPart().toUpperCase()}@${pick(POPULAR_DOMAINS.slice(0, 5)).toUpperCase()} `;
}
const addresses = Array.from({ length: COUNT }, address);

// The zone: every generated domain with one to three MX records (as before this bench used
// the real resolver); anything else is NXDOMAIN. dnsmasq answers it on a free loopback port.
const zone = new Map();
for (const d of POPULAR_DOMAINS) zone.set(d, 3);
for (const d of COMPANIES) zone.set(d, 1 + (d.length % 3));
for (const d of [...TYPOS, ...DISPOSABLE]) zone.set(d, 1);
for (const d of ['xn--bcher-kva.de', 'xn--mnchen-3ya.de', 'xn--caf-dma.fr']) zone.set(d, 2);
const freeUdpPort = () =>
  new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const dnsDir = mkdtempSync(join(tmpdir(), 'mailconv-bench-dns-'));
const dnsPort = await freeUdpPort();
const conf = [
  'listen-address=127.0.0.1',
  `port=${dnsPort}`,
  'bind-interfaces',
  'no-resolv',
  'no-hosts',
  'no-poll',
  'user=root',
  `pid-file=${join(dnsDir, 'dnsmasq.pid')}`,
  // Authoritative for every name it is asked: NXDOMAIN for anything not listed, never upstream.
  'local=/#/',
  'cache-size=0',
];
for (const [d, n] of zone) for (let i = 0; i < n; i++) conf.push(`mx-host=${d},mx${i}.${d},${i * 10}`);
writeFileSync(join(dnsDir, 'dnsmasq.conf'), conf.join('\n') + '\n');
const dnsmasq = spawn('dnsmasq', ['--keep-in-foreground', `--conf-file=${join(dnsDir, 'dnsmasq.conf')}`], { stdio: ['ignore', 'ignore', 'inherit'] });
const stopDns = () => {
  if (dnsmasq.exitCode === null) dnsmasq.kill();
  rmSync(dnsDir, { recursive: true, force: true });
};
process.on('exit', stopDns);

const engine = createEngine({ dns: { servers: [`127.0.0.1:${dnsPort}`], timeoutMs: 1000, tries: 3 } });
const verifier = engine.verifier;
for (let i = 0; ; i++) {
  try {
    await engine.resolver.lookupMail('gmail.com');
    break;
  } catch {
    if (i > 50 || dnsmasq.exitCode !== null) throw new Error('dnsmasq did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}
// Warm the resolver's cache with every domain the run will ask (in batches, as a service
// would have over time): the measured run then reads the TTL cache, misses nothing.
const wantDomains = [...zone.keys(), 'example.com', 'example.c', 'b'];
const t0dns = process.hrtime.bigint();
for (let i = 0; i < wantDomains.length; i += 500) await Promise.all(wantDomains.slice(i, i + 500).map((d) => engine.resolver.lookupMail(d)));
const outcomes = await Promise.all(wantDomains.slice(0, 50).map((d) => engine.resolver.lookupMail(d)));
if (!outcomes.some((o) => o.status === 'mx')) throw new Error('the bench DNS server answered no MX');
console.log(`dns: ${wantDomains.length.toLocaleString('en')} domains looked up through dnsmasq in ${(Number(process.hrtime.bigint() - t0dns) / 1e9).toFixed(2)} s (not timed below)`);

async function runPipeline(list) {
  const statuses = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < list.length; i++) {
    const r = await verifier.verify(list[i]);
    statuses[r.status]++;
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, statuses };
}
function runIsEmail(list) {
  let valid = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < list.length; i++) if (isEmail(list[i])) valid++;
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, valid };
}

// Warm both up on a slice so neither pays for JIT compilation in the measured run.
const warm = addresses.slice(0, Math.min(50_000, COUNT));
await runPipeline(warm);
runIsEmail(warm);

const pipeline = await runPipeline(addresses);
const baseline = runIsEmail(addresses);
const pipelinePerS = Math.round(COUNT / pipeline.seconds);
const isEmailPerS = Math.round(COUNT / baseline.seconds);
const ratio = pipelinePerS / isEmailPerS;
console.log(`addresses: ${COUNT.toLocaleString('en')} (seed ${SEED}), distinct domains ~${(zone.size + 8).toLocaleString('en')}`);
console.log(`pipeline: ${pipeline.seconds.toFixed(2)} s, ${pipelinePerS.toLocaleString('en')} addresses/s, statuses ${JSON.stringify(pipeline.statuses)}`);
console.log(`validator isEmail: ${baseline.seconds.toFixed(2)} s, ${isEmailPerS.toLocaleString('en')} addresses/s, ${baseline.valid.toLocaleString('en')} valid`);
console.log(`target: >= 250,000/s and faster than isEmail -> ${pipelinePerS >= 250_000 && ratio > 1 ? 'met' : 'NOT met'}`);
console.log(`RESULT pipeline_per_s=${pipelinePerS} isemail_per_s=${isEmailPerS} ratio=${ratio.toFixed(2)}`);
stopDns();
