/** The requester grammar lives in schemas/, shared with the client SDK; the domain code imports it from here. */
export { describeRequester, normalizeIssueRef, parseRequester, type ParsedRequester } from '../../schemas/requester.js';
