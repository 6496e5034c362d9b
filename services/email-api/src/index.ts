export { buildApp, EMAIL_KEY_PREFIX, type EmailAppOptions } from './app.js';
export { loadEmailConfig, type EmailConfig } from './config.js';
export { DEFAULT_EMAIL_PLANS, emailPlans, type EmailPlan } from './plans.js';
export { EMAIL_ERROR_STATUS, EMAIL_ERROR_CODES, type EmailErrorCode } from './errors.js';
