/**
 * How the client reads the service's answers to decision queries: only a schema-valid decision
 * about exactly the query asked is used; anything else is a local denial that says why. The small
 * readers at the end (error body, cause, JSON) serve the admin calls and `check()` too.
 */
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import type { DecideQuery, Decision } from '../../schemas/api.js';
import { ErrorBodySchema, type ErrorBody } from '../../schemas/errors.js';
import { describeTransportError, errorText, isRejection, oneLine, rejectionCause } from '../causes.js';
import { isJsonObject, localDenial, unavailable, type ClientDecision } from '../decision.js';
import { ENDPOINTS } from './endpoints.js';
import { TransportFailure, type Exchange } from './transport.js';

const decisionCheck = ENDPOINTS.decide.answer;
// Compiled once per process: validating an answer costs well under a microsecond.
const errorBodyCheck = TypeCompiler.Compile(ErrorBodySchema);

/** The decision of one `/decide` answer for `query`. */
export function decisionFromAnswer(query: DecideQuery, answer: Exchange): ClientDecision {
  if (answer.status !== 200) return httpDenial(query, answer);
  const body = parseJson(answer.text);
  if (body === undefined) return unavailable(query, 'invalid JSON in the answer');
  if (!decisionCheck.Check(body)) return unavailable(query, `invalid answer: ${firstError(decisionCheck, body)}`);
  return trusted(query, body);
}

/** The decisions of one `/decide/batch` answer, in the queries' order. */
export function decisionsFromBatchAnswer(queries: readonly DecideQuery[], answer: Exchange): ClientDecision[] {
  const denyAll = (deny: (query: DecideQuery) => ClientDecision) => queries.map(deny);
  if (answer.status !== 200) return denyAll((query) => httpDenial(query, answer));
  const body = parseJson(answer.text);
  if (body === undefined) return denyAll((query) => unavailable(query, 'invalid JSON in the answer'));
  const decisions = isJsonObject(body) ? body.decisions : undefined;
  if (!Array.isArray(decisions)) return denyAll((query) => unavailable(query, 'invalid answer: /decisions Expected array'));
  if (decisions.length !== queries.length) {
    const cause = `the batch answer has ${String(decisions.length)} decisions for ${String(queries.length)} queries`;
    return denyAll((query) => unavailable(query, cause));
  }
  // Each answer is checked like a /decide answer, so a call gets the same denial text either way.
  return queries.map((query, index) => {
    const decision: unknown = decisions[index];
    if (!decisionCheck.Check(decision)) return unavailable(query, `invalid answer: ${firstError(decisionCheck, decision)}`);
    return trusted(query, decision);
  });
}

/**
 * A schema-valid decision is used as is, except an `allow` that does not answer this query (other
 * tool, project or requester, or an inconsistent reason): the SDK denies rather than trust it.
 */
function trusted(query: DecideQuery, decision: Decision): ClientDecision {
  if (!decision.allow) return decision;
  if (decision.tool.name !== query.tool || decision.project !== query.project || decision.requester.id !== query.requester) {
    return unavailable(
      query,
      `the answer is about tool ${oneLine(decision.tool.name, 40)} for requester ${JSON.stringify(oneLine(decision.requester.id, 40))} in project ${oneLine(decision.project, 40)}, not the call asked about`,
    );
  }
  if (decision.reason !== 'allowed') return unavailable(query, `the answer allows with reason ${decision.reason}`);
  return decision;
}

/** A non-200 answer: the caller is wrong (`pdp_rejected`) or the service failed (`pdp_unavailable`). */
function httpDenial(query: DecideQuery, answer: Exchange): ClientDecision {
  const error = errorBodyOf(answer);
  if (isRejection(answer.status)) return localDenial(query, 'pdp_rejected', rejectionCause(answer.status, error?.code, error?.message));
  return unavailable(query, httpCause(answer));
}

/** `HTTP 500: internal_error`, the short cause of an answer that is not a success. */
export function httpCause(answer: Exchange): string {
  const error = errorBodyOf(answer);
  return `HTTP ${String(answer.status)}${error === undefined ? '' : `: ${oneLine(error.code, 40)}`}`;
}

/** The `{ error: { code, message } }` of an answer, when it has one. */
export function errorBodyOf(answer: Exchange): ErrorBody['error'] | undefined {
  const body = parseJson(answer.text);
  return errorBodyCheck.Check(body) ? body.error : undefined;
}

/** The cause of a failed exchange, for a message. */
export function failureText(error: unknown): string {
  if (error instanceof TransportFailure) return error.message;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? describeTransportError(error) : oneLine(errorText(error));
}

export function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function firstError(check: TypeCheck<TSchema>, value: unknown): string {
  const error = check.Errors(value).First();
  return error === undefined ? 'does not match the schema' : oneLine(`${error.path || '/'} ${error.message}`, 120);
}
