export { SIGNATURE_HEADER, signWebhook, verifyWebhookSignature } from './webhooks.js';
export { ApiError, ChecksumError, HttpCore, retryAfterSeconds, type ClientOptions, type RequestOptions } from './http.js';
export { csvRows, fileBlob, saveBody, sha256FromDigest, type SavedFile } from './files.js';
export * from './email.js';
export * from './convert.js';
export type { paths as EmailApiPaths } from './generated/email-api.js';
export type { paths as ConvertApiPaths } from './generated/convert-api.js';
