/** One source of truth for the wire shapes, shared by the server, the client SDK and the UI. */
export * from './catalog.js';
export * from './policy.js';
export * from './conditions.js';
export * from './limits.js';
export * from './errors.js';
export * from './api.js';
export * from './requester.js';
export * from './approvals.js';
export * from './policy-as-code.js';
export * from './servers.js';
