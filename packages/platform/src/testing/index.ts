export { createTestDatabase, isCi, testBackends, testPostgresAdminUrl, type Backend } from './test-database.js';
export { LogCapture } from './log-capture.js';
export { answerChecker, assertAnswersMatchDocument, assertOpenApiComplete, recordAnswers, type RecordedAnswer } from './openapi.js';
export { assertServesFavicon } from './favicon.js';
export {
  assertRequestsKeepContract, contentTypes, contractProblems, deepNesting, headerText, hostileBody, hostileJson, hostileNumber, hostilePayload, hostileQuery, hostileString, oddHeaders, pathSegment, propertySeed, rangeHeader,
  type AnswerRules, type PropertyBudget,
} from './hostile-requests.js';
export { assertSchemaRequestsKeepContract, schemaRequests, valueFor, type SchemaRequestContext } from './schema-requests.js';
export { testRedisUrl } from './test-redis.js';
export { freePort, startProcess, stopProcess, type StartedProcess } from './processes.js';
export { startOwnPostgres, startOwnRedis, type OwnServer } from './own-services.js';
export { formatLoadTable, runMixedLoad, type KindFigures, type LoadKind, type LoadLane, type LoadRequest, type LoadResult } from './load-generator.js';
export { mountSmallVolume, type SmallVolume } from './small-volume.js';
export { startTcpRelay, type TcpRelay } from './tcp-relay.js';
export { startDnsServer, type DnsRecord } from './dns-server.js';
export { TestReceiver, signatureValid, type Behaviour, type Received } from './webhook-receiver.js';
