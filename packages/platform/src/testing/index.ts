export { createTestDatabase, isCi, testBackends, testPostgresAdminUrl, type Backend } from './test-database.js';
export { LogCapture } from './log-capture.js';
export { assertAnswersMatchDocument, assertOpenApiComplete, recordAnswers, type RecordedAnswer } from './openapi.js';
export { testRedisUrl } from './test-redis.js';
export { freePort, startProcess, stopProcess, type StartedProcess } from './processes.js';
export { startOwnPostgres, startOwnRedis, type OwnServer } from './own-services.js';
