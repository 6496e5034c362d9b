/** The events an endpoint can subscribe to (contract, Events), in their canonical order. */
export const WEBHOOK_EVENTS = ['batch.completed', 'job.completed', 'job.failed'] as const;

/** Names the service in every delivery (decision 20). */
export const WEBHOOK_USER_AGENT = 'MailconvEmailVerification-Webhooks/1.0';
