/**
 * `PdpClient.check()`: one authenticated read (`GET /projects`) that tells an enforcement point at
 * boot whether its URL, its token and its project are right (docs/api.md#the-client-sdk).
 */
import type { ProjectStatus } from '../../schemas/api.js';
import { errorBodyOf, failureText, firstError, httpCause, parseJson } from './answers.js';
import { isRejection, oneLine, rejectionCause } from '../causes.js';
import { ENDPOINTS } from './endpoints.js';
import type { Exchange } from './transport.js';

const projectsCheck = ENDPOINTS.listProjects.answer;

/** Options of `PdpClient.check()`. */
export interface CheckOptions {
  /** The project this enforcement point serves: checked to exist. */
  project?: string | undefined;
  /** Deadline of the check in milliseconds. Default: the client's `timeoutMs`, at least 2,000. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Why a check failed: the service cannot be used (`pdp_unavailable`), it refuses this caller
 * (`pdp_rejected`), or it does not serve the project.
 */
export type CheckFailureReason = 'pdp_unavailable' | 'pdp_rejected' | 'unknown_project';

/** What `PdpClient.check()` found. */
export type CheckResult =
  | {
      ok: true;
      /** The policy revision of the project, when one was given. */
      revision?: string;
      /** Whether the project's policy file is valid; with `invalid`, the service denies every call of the project until it is fixed. */
      status?: ProjectStatus;
    }
  | {
      ok: false;
      reason: CheckFailureReason;
      /**
       * One line saying what is wrong and where:
       * `policy service at http://127.0.0.1:8787 rejected the request (401 unauthorized: ...)`.
       */
      message: string;
    };

export async function checkService(baseUrl: string, project: string | undefined, read: () => Promise<Exchange>): Promise<CheckResult> {
  const where = `policy service at ${baseUrl}`;
  let answer: Exchange;
  try {
    answer = await read();
  } catch (error) {
    return { ok: false, reason: 'pdp_unavailable', message: `${where} unreachable (${failureText(error)})` };
  }
  if (answer.status !== 200) {
    const error = errorBodyOf(answer);
    if (isRejection(answer.status)) {
      return {
        ok: false,
        reason: 'pdp_rejected',
        message: `${where} rejected the request (${rejectionCause(answer.status, error?.code, error?.message)})`,
      };
    }
    return { ok: false, reason: 'pdp_unavailable', message: `${where} unreachable (${httpCause(answer)})` };
  }
  const body = parseJson(answer.text);
  if (!projectsCheck.Check(body)) {
    const problem = body === undefined ? 'no JSON body' : firstError(projectsCheck, body);
    return { ok: false, reason: 'pdp_unavailable', message: `${where} answered something else than the policy service would (${problem})` };
  }
  if (project === undefined) return { ok: true };
  const found = body.projects.find((candidate) => candidate.id === project);
  if (found === undefined) {
    const served = body.projects.map((candidate) => candidate.id);
    const list = served.length === 0 ? 'none' : oneLine(served.slice(0, 10).join(', ') + (served.length > 10 ? ', …' : ''), 120);
    return {
      ok: false,
      reason: 'unknown_project',
      message: `${where} does not serve project ${JSON.stringify(oneLine(project, 128))} (projects served: ${list})`,
    };
  }
  return { ok: true, revision: found.revision, status: found.status };
}
