// Answer shapes from the email service's OpenAPI document (packages/client/src/generated/email-api.ts).
import type { paths } from '../../../client/src/generated/email-api.js';

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete', S extends number> = paths[P][M] extends { responses: Record<S, { content: { 'application/json': infer T } }> } ? T : never;

export type Account = Json<'/api/v1/account', 'get', 200>;
export type Verification = Json<'/api/v1/verify-single', 'post', 200>;
export type JobList = Json<'/api/v1/jobs', 'get', 200>;
export type JobSubmitted = Json<'/api/v1/jobs', 'post', 202>;
export type JobStatus = Json<'/api/v1/jobs/{job_id}', 'get', 200>;

/** `GET /api/dashboard/usage` (this service's extension): verifications per UTC day of the quota month. */
export type DailyUsage = Json<'/api/dashboard/usage', 'get', 200>;

/** `GET /readyz`; its `smtp` section is the last SMTP self-check (issue 23), null without SMTP probing. */
export type Readiness = Json<'/readyz', 'get', 200>;
export type SmtpSelfCheck = NonNullable<Readiness['smtp']>;
