export { parseDnsServers } from './dns-servers.js';
export { isPrivateAddress, networkFence } from './addresses.js';
export { bareHost, checkUrl, resolverLookup, type EgressPolicy, type EgressProblem, type Lookup, type PinnedTarget, type TargetCheck } from './guard.js';
export { fetchThroughGuard, pinnedLookup, readCapped, type FetchedResponse, type FetchOutcome, type FetchProblem, type GuardedFetchOptions } from './fetch.js';
