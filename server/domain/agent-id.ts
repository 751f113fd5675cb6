/**
 * Which agent ids may be written to a policy (docs/api.md#http-api): the rule lives in schemas/, where
 * the requester grammar of /decide and of the client SDK uses the same one.
 */
export { agentIdProblem } from '../../schemas/agent-id.js';
