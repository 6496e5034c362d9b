// Answer shapes from the conversion service's OpenAPI document (packages/client/src/generated/convert-api.ts).
import type { paths } from '../../../client/src/generated/convert-api.js';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete', S extends number> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

export type Usage = Json<'/api/v1/account/usage', 'get', 200>;
export type Limits = Json<'/api/v1/account/limits', 'get', 200>;
export type Uploaded = Json<'/api/v1/upload', 'post', 201>;
export type Formats = Json<'/api/v1/formats', 'get', 200>;
export type Targets = Json<'/api/v1/formats/{ext}/targets', 'get', 200>;
export type Conversion = Json<'/api/v1/jobs/{id}', 'get', 200>;

/** `GET /api/dashboard/conversions` (this service's extension): the account's most recent conversions. */
export type ConversionList = Json<'/api/dashboard/conversions', 'get', 200>;
