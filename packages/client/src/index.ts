export { SIGNATURE_HEADER, signWebhook, verifyWebhookSignature } from './webhooks.js';
