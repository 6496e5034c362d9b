// Issue 44: Chromium was probed by the converter but installed only by `npm test`, so a
// machine set up by `npm start` alone never had it. Every requirement an engine probes has a
// package in ENGINE_PACKAGES, and that package is in a list `npm start` installs; an engine
// that is missing says what to install, and is found again once installed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { scratchDir, tool } from '../testing/tools.js';
import { missingProbe, type EngineProbe } from './engine.js';
import { ENGINE_PACKAGES, installHint } from './engine-packages.js';
import { PotraceEngine } from './potrace.engine.js';

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROOT = join(PACKAGE_DIR, '..', '..');

/** The Debian packages `npm start` installs: every list but the test-only ones. */
function startLists(): Set<string> {
  const dir = join(ROOT, 'scripts', 'system-packages');
  const names = new Set<string>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.txt') || file.startsWith('test-')) continue;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const name = line.replace(/#.*/, '').trim();
      if (name) names.add(name);
    }
  }
  return names;
}

/** Every installed package's Depends and Pre-Depends (one dpkg-query for all). */
function dependencies(): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  for (const line of tool('/usr/bin/dpkg-query', ['-W', '-f=${Package}\t${Depends}, ${Pre-Depends}\n']).split('\n')) {
    const [name, fields = ''] = line.split('\t');
    // "a (>= 1) | b, c:any": each alternative may be the one installed.
    if (name) deps.set(name, fields.split(/[,|]/).map((d) => d.trim().split(/[\s:(]/)[0] ?? '').filter(Boolean));
  }
  return deps;
}

/** The packages `name` brings with it, `depth` levels of dependencies deep. */
function brings(deps: Map<string, string[]>, name: string, depth: number): Set<string> {
  const seen = new Set([name]);
  let level = [name];
  for (let i = 0; i < depth; i++) {
    level = level.flatMap((n) => deps.get(n) ?? []).filter((n) => !seen.has(n));
    for (const n of level) seen.add(n);
  }
  return seen;
}

let dir: string;
let conv: Converter;
let probes: readonly EngineProbe[];

before(async () => {
  dir = await scratchDir('conv-packages-');
  conv = await Converter.create({ workDir: dir, libreoffice: { instances: 1 } });
  probes = conv.probes();
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

test('every requirement an engine probes has its package in ENGINE_PACKAGES, and every entry is probed', () => {
  const probed = new Set(probes.flatMap((p) => p.requires));
  for (const p of probes) {
    assert.ok(p.requires.length > 0, `${p.engine} probes nothing`);
    for (const r of p.requires) assert.ok(ENGINE_PACKAGES[r], `${p.engine} probes ${r}, which has no package in engines/engine-packages.ts`);
  }
  const stale = Object.keys(ENGINE_PACKAGES).filter((k) => !probed.has(k));
  assert.deepEqual(stale, [], 'entries no engine probes any more');
});

test('every engine package is in a list `npm start` installs (Debian lists without test-, npm dependencies)', () => {
  const listed = startLists();
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const [requirement, source] of Object.entries(ENGINE_PACKAGES)) {
    if (source.manager === 'debian') assert.ok(listed.has(source.name), `${requirement}: ${source.name} is not in a scripts/system-packages list that npm start installs`);
    else assert.ok(manifest.dependencies[source.name], `${requirement}: ${source.name} is not a dependency of @mailconv/converter`);
  }
  // The regression itself: the browser engine's package is installed by npm start.
  assert.equal(ENGINE_PACKAGES['/usr/lib/chromium/chromium']?.name, 'chromium');
  assert.ok(listed.has('chromium'));
});

test('each Debian entry names the package that really brings the file (dpkg, its dependencies included)', () => {
  const deps = dependencies();
  const files = Object.entries(ENGINE_PACKAGES).filter(([, source]) => source.manager === 'debian');
  const listing = tool('/usr/bin/dpkg-query', ['-S', ...files.map(([path]) => realpathSync(path))]);
  const owners = new Map(listing.split('\n').filter(Boolean).map((line) => [line.slice(line.lastIndexOf(': ') + 2), line.slice(0, line.lastIndexOf(': ')).split(',')[0]?.split(':')[0]?.trim() ?? '']));
  for (const [requirement, source] of files) {
    const owner = owners.get(realpathSync(requirement));
    assert.ok(owner, `${requirement}: no installed package owns it`);
    assert.ok(brings(deps, source.name, 3).has(owner), `${requirement} comes from ${owner}, which ${source.name} does not bring`);
  }
});

test('a missing engine names what to install, whatever kind of package brings it', () => {
  const probe = missingProbe('chromium', ['/usr/lib/chromium/chromium'], ['/usr/lib/chromium/chromium']);
  assert.equal(probe.available, false);
  assert.match(probe.warning ?? '', /^chromium disabled: missing \/usr\/lib\/chromium\/chromium; install it with `apt-get install chromium` \(npm start installs every engine\)$/);
  assert.match(installHint(['/usr/bin/pdftoppm', '/usr/bin/pdfinfo', '/usr/bin/qpdf']), /`apt-get install poppler-utils qpdf`/);
  assert.match(installHint(['npm:qoijs']), /npm ci.*qoijs/);
});

/** Potrace, missing until `installed` is set: an operator who installs it after start-up. */
class LatePotrace extends PotraceEngine {
  installed = false;
  probed = 0;
  override probe(): Promise<EngineProbe> {
    this.probed += 1;
    return this.installed ? super.probe() : Promise.resolve(missingProbe(this.name, ['/usr/bin/potrace'], ['/usr/bin/potrace']));
  }
}

test('an engine installed after start-up is found again, at most once per interval; a disabled one is not probed at all', async () => {
  const late = new LatePotrace();
  const slow = await Converter.create({ workDir: join(dir, 'slow'), replaceEngines: [late], disabledEngines: ['calibre', 'chromium'], reprobeIntervalMs: 60_000 });
  try {
    assert.equal(slow.probes().some((p) => p.engine === 'calibre' || p.engine === 'chromium'), false, 'disabled engines are not probed');
    assert.deepEqual(slow.registry.routes('epub', 'pdf').flatMap((r) => r.steps.map((s) => s.engine)).includes('calibre'), false);
    assert.equal(slow.registry.routes('png', 'svg').some((r) => r.steps.some((s) => s.engine === 'potrace')), false);
    late.installed = true;
    assert.equal(await slow.refreshProbes(), false, 'within the interval: not probed again');
    assert.equal(late.probed, 1);
  } finally {
    await slow.close();
  }
  await assert.rejects(Converter.create({ workDir: join(dir, 'bad'), disabledEngines: ['chromeum'] }), /unknown engine chromeum.*chromium/);

  const again = new LatePotrace();
  const fast = await Converter.create({ workDir: join(dir, 'fast'), replaceEngines: [again], reprobeIntervalMs: 0 });
  try {
    assert.equal(fast.probes().find((p) => p.engine === 'potrace')?.available, false);
    assert.equal(await fast.refreshProbes(), false, 'still missing');
    again.installed = true;
    const [first, second] = await Promise.all([fast.refreshProbes(), fast.refreshProbes()]);
    assert.equal(first, true);
    assert.equal(second, true, 'concurrent callers share one round');
    assert.equal(again.probed, 3);
    assert.equal(fast.probes().find((p) => p.engine === 'potrace')?.available, true);
    assert.deepEqual(fast.registry.routes('png', 'svg')[0]?.steps.map((s) => s.engine), ['imagemagick', 'potrace']);
  } finally {
    await fast.close();
  }
});
