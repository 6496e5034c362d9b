import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { Converter } from '@mailconv/converter';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, type Backend } from '@mailconv/platform/testing';
import { buildApp, CONVERT_KEY_PREFIX } from '../../app.js';
import { loadConvertConfig } from '../../config.js';
import { CONVERT_MIGRATIONS } from '../../db/migrations.js';

/** A conversion app on a fresh database with one `api`-plan account; filled in by the enclosing block's `before`. */
export interface ConvertAppFixture {
  app: ServiceApp;
  admin: ServiceCore<never>;
  /** The account's API key. */
  key: string;
}

/**
 * Builds the app in the enclosing block's `before` (on `backend`, storing under `storage()`,
 * sharing the suite's warm `converter()`), and closes it and drops its database in `after`.
 */
export function useConvertApp(
  backend: Backend,
  options: { storage: () => string; converter: () => Converter; email: string; env?: Record<string, string> },
): ConvertAppFixture {
  const fixture = {} as ConvertAppFixture;
  let drop: () => Promise<void> = async () => undefined;
  before(async () => {
    const db = await createTestDatabase(backend);
    drop = db.drop;
    const config = loadConvertConfig({ CONVERT_DATABASE_URL: db.url, CONVERT_LOG_LEVEL: 'silent', CONVERT_STORAGE_DIR: options.storage(), ...options.env });
    fixture.app = await buildApp(config, { converter: options.converter() });
    fixture.admin = await openServiceCore({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
    const acct = await fixture.admin.accounts.createAccount({ email: options.email, plan: 'api' }, new Date());
    assert.ok(acct.ok);
    fixture.key = acct.apiKey;
  });
  after(async () => {
    await fixture.app.close();
    await fixture.admin.close();
    await drop();
  });
  return fixture;
}

/** A multipart body built by the platform's own FormData/Request (not by the code under test). */
export async function multipartBody(fields: Record<string, string>, file?: { name: string; bytes: Buffer }): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([file.bytes]), file.name);
  const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type') as string } };
}
