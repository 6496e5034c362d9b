/** Redis for tests: `TEST_REDIS_URL`, or the local server the test command makes sure is running. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
}
