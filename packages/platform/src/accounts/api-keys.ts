import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.js';

/** Random part of a key: 32 base62 characters, about 190 bits from the CSPRNG. */
export const API_KEY_RANDOM_LENGTH = 32;

/** A new key `prefix` + 32 base62 characters, e.g. `ev_live_…`. Shown once, never stored. */
export function generateApiKey(prefix: string): string {
  return prefix + randomBase62(API_KEY_RANDOM_LENGTH);
}

/**
 * The stored form of a key. Keys carry ~190 random bits, so a fast hash is enough: there
 * is nothing to brute-force, and a slow hash would cost every request.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Masked form for listings: the prefix and the last four characters. */
export function previewApiKey(key: string, prefix: string): string {
  return `${prefix}…${key.slice(-4)}`;
}

/** Cheap shape check that rejects garbage before any database lookup. */
export function looksLikeApiKey(key: string, prefix: string): boolean {
  return key.length === prefix.length + API_KEY_RANDOM_LENGTH && key.startsWith(prefix) && /^[0-9A-Za-z]+$/.test(key.slice(prefix.length));
}
