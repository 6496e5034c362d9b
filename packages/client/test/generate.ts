// `npm run generate -w packages/client`: rewrites src/generated/ from the services' served documents.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findProjectRoot } from '@mailconv/platform';
import { GENERATED, generatedTypes, type ServiceName } from './openapi-types.js';

const dir = join(findProjectRoot(), 'packages', 'client', 'src', 'generated');
for (const service of Object.keys(GENERATED) as ServiceName[]) {
  const path = join(dir, GENERATED[service]);
  await writeFile(path, await generatedTypes(service));
  console.log(`wrote ${path}`);
}
