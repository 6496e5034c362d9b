import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GENERATED, generatedTypes, type ServiceName } from './openapi-types.js';
import { ROOT } from './services.test-support.js';

// The SDK's types are generated from the documents the services serve; they are committed
// so the package builds alone. This fails when a schema changed and the types were not
// regenerated (`npm run generate -w packages/client`), so the two cannot drift.
for (const service of Object.keys(GENERATED) as ServiceName[]) {
  test(`src/generated/${GENERATED[service]} is what openapi-typescript makes of the served ${service} document`, async () => {
    const committed = await readFile(join(ROOT, 'packages', 'client', 'src', 'generated', GENERATED[service]), 'utf8');
    const fresh = await generatedTypes(service);
    assert.ok(fresh === committed, `src/generated/${GENERATED[service]} is out of date: run \`npx tsc -b && npm run generate -w packages/client\` and commit the result`);
  });
}
