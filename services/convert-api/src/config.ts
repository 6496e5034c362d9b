import { resolve } from 'node:path';
import { z } from 'zod';
import { commonConfig, commonSettings, findProjectRoot, parseSettings, type CommonServiceConfig } from '@mailconv/platform';

const DEFAULTS = { port: 8081, dataDir: 'data/convert', databaseFile: 'convert.db' };

/**
 * Every setting of the conversion service, each `CONVERT_…` (documented with its default
 * in `.env.example`). The names fixed by convert-decisions.md are used as written.
 */
const ConvertSettings = z.object({
  ...commonSettings('CONVERT', DEFAULTS),
  CONVERT_STORAGE_DIR: z.string().optional(),
});

export interface ConvertConfig extends CommonServiceConfig {
  /** Where uploads and outputs live (a shared volume in scale-out). */
  storageDir: string;
}

/** Reads the conversion service's settings from `env`; throws ConfigError listing every problem. */
export function loadConvertConfig(env: Readonly<Record<string, string | undefined>> = process.env, root = findProjectRoot()): ConvertConfig {
  const parsed = parseSettings(ConvertSettings, env) as Record<string, unknown>;
  const common = commonConfig('CONVERT', parsed, DEFAULTS, root);
  const storage = parsed.CONVERT_STORAGE_DIR as string | undefined;
  return { ...common, storageDir: storage ? resolve(root, storage) : resolve(common.dataDir, 'storage') };
}
