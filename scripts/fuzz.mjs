// `npm run fuzz [-- N]`: the property suites of both services — the hand-written requests and
// the schema-driven ones generated from each OpenAPI document (issue #29) — with N times
// their usual number of requests and time (default 10: about 8,000 schema-driven requests per
// service), under a fresh seed that is printed (`PROPERTY_SEED=…` replays a run). Runs through
// the test command, so it installs what is missing and uses the same databases and rig.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './lib/ensure.mjs';

const scale = process.argv[2] ?? process.env.PROPERTY_RUNS ?? '10';
if (!/^[1-9]\d{0,3}$/.test(scale)) {
  console.error(`usage: npm run fuzz [-- N]   (N: how many times the suite's usual requests, 1-9999; got "${scale}")`);
  process.exit(2);
}
const res = spawnSync(process.execPath, [join(ROOT, 'scripts', 'test.mjs'), 'properties.test'], { stdio: 'inherit', env: { ...process.env, PROPERTY_RUNS: scale } });
process.exit(res.status ?? 1);
