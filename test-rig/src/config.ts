import type { RigInfo } from './rig.js';

/**
 * Name of the environment variable through which `scripts/test.mjs` hands the rig it
 * started (the `RIG-READY` JSON) to every test process, so Postfix starts once per run.
 */
export const RIG_ENV = 'MAILCONV_TEST_RIG';

/** The rig described by the environment, or `null` when the tests must start their own. */
export function rigFromEnvironment(): RigInfo | null {
  const raw = process.env[RIG_ENV];
  if (!raw) return null;
  return JSON.parse(raw) as RigInfo;
}
