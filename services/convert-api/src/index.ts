export { buildApp, CONVERT_KEY_PREFIX, type ConvertAppOptions } from './app.js';
export { loadConvertConfig, type ConvertConfig } from './config.js';
export { DEFAULT_CONVERT_PLANS, convertPlans, type ConvertPlan } from './plans.js';
export { CONVERT_ERROR_STATUS, CONVERT_ERROR_CODES, type ConvertErrorCode } from './errors.js';
