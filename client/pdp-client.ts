/**
 * The HTTP client of the policy decision service (SPEC §8). `decide` and `decideBatch` never
 * throw and never allow on error; the admin methods throw {@link PdpError}.
 */
import { Pool } from 'undici';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { Static, TSchema } from '@sinclair/typebox';
import {
  CatalogResponseSchema,
  DecisionSchema,
  EffectivePolicySchema,
  EphemeralPoliciesResponseSchema,
  EphemeralPolicySchema,
  MAX_BATCH_QUERIES,
  PermissionsViewSchema,
  ProjectsResponseSchema,
  RecentDecisionsResponseSchema,
  type CatalogResponse,
  type DecideQuery,
  type Decision,
  type EffectivePolicy,
  type EphemeralPolicy,
  type EphemeralPolicyBody,
  type PermissionsView,
  type ProjectsResponse,
  type RecentDecision,
} from '../schemas/api.js';
import { ErrorBodySchema } from '../schemas/errors.js';
import type { PolicyDocument } from '../schemas/policy.js';
import { isJsonObject, unavailable, type ClientDecision } from './decision.js';
import { PdpError } from './errors.js';
import { exchangeWithDeadline, TransportFailure, type Exchange, type ExchangeRequest } from './transport.js';

// Compiled once per process: validating an answer costs well under a microsecond.
const decisionCheck = TypeCompiler.Compile(DecisionSchema);
const errorBodyCheck = TypeCompiler.Compile(ErrorBodySchema);
const catalogCheck = TypeCompiler.Compile(CatalogResponseSchema);
const projectsCheck = TypeCompiler.Compile(ProjectsResponseSchema);
const permissionsCheck = TypeCompiler.Compile(PermissionsViewSchema);
const effectiveCheck = TypeCompiler.Compile(EffectivePolicySchema);
const recentCheck = TypeCompiler.Compile(RecentDecisionsResponseSchema);
const ephemeralCheck = TypeCompiler.Compile(EphemeralPolicySchema);
const ephemeralListCheck = TypeCompiler.Compile(EphemeralPoliciesResponseSchema);

export interface PdpClientOptions {
  /** Where the service listens, e.g. `http://127.0.0.1:8787` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`: the decide token, or the admin token for writes. */
  token?: string | undefined;
  /** Hard deadline of one decision (or one batch), connection and body read included. Default 500. */
  timeoutMs?: number | undefined;
  /** Deadline of one admin call (writes are fsync'ed by the service). Default 10,000. */
  adminTimeoutMs?: number | undefined;
  /** Most sockets kept open to the service. Default 16. */
  connections?: number | undefined;
}

/** Conditional-write option of the permission writes: the `ETag` (revision) last read. */
export interface WriteOptions {
  ifMatch?: string | undefined;
}

/** The permissions view of a project with its `ETag` (the revision, for `If-Match`). */
export interface PermissionsResult {
  permissions: PermissionsView;
  /** The revision from the `ETag` header, unquoted (falls back to the body's `revision`). */
  etag: string;
  revision: string;
}

/**
 * Client of the IdeA MCP tool permission service, on one keep-alive undici `Pool`.
 *
 * @example
 * ```ts
 * import { PdpClient } from './client/index.js';
 *
 * const pdp = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.PDP_DECIDE_TOKEN });
 * const decision = await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
 * if (!decision.allow) {
 *   // "Tool idea_memory_write is denied for agent QA in project demo (policy: builtin-read-only). ..."
 *   return { content: [{ type: 'text', text: decision.message }], isError: true };
 * }
 * // Admin calls throw a PdpError with the service's error code:
 * const admin = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: adminToken });
 * const { etag } = await admin.getPermissions('demo');
 * await admin.putAgent('demo', 'QA', ['idea_ticket_read', 'idea_memory_write'], { ifMatch: etag });
 * await pdp.close();
 * ```
 */
export class PdpClient {
  readonly timeoutMs: number;
  readonly adminTimeoutMs: number;
  private readonly pool: Pool;
  private readonly pathPrefix: string;
  private readonly baseHeaders: Record<string, string>;

  constructor(options: PdpClientOptions) {
    const url = new URL(options.baseUrl);
    this.timeoutMs = positive(options.timeoutMs, 500);
    this.adminTimeoutMs = positive(options.adminTimeoutMs, 10_000);
    this.pathPrefix = url.pathname.replace(/\/+$/, '');
    this.baseHeaders = { accept: 'application/json' };
    if (options.token !== undefined && options.token !== '') this.baseHeaders['authorization'] = `Bearer ${options.token}`;
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 16,
      keepAliveTimeout: 30_000,
      // Backstops only: the per-request deadline is what enforces timeoutMs.
      headersTimeout: Math.max(this.timeoutMs, this.adminTimeoutMs),
      bodyTimeout: Math.max(this.timeoutMs, this.adminTimeoutMs),
      maxResponseSize: 16 * 1024 * 1024,
    });
  }

  /** Closes the sockets. Later decisions are denied (`pdp_unavailable`), later admin calls throw. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /**
   * Asks whether `query.requester` may call `query.tool` in `query.project`. Never throws, never
   * allows on error: any failure is `{ allow: false, reason: "pdp_unavailable", message }`.
   */
  async decide(query: DecideQuery): Promise<ClientDecision> {
    try {
      const answer = await this.exchange(
        { method: 'POST', path: '/decide', body: JSON.stringify(query), retryOnStaleSocket: true },
        this.timeoutMs,
      );
      if (answer.status !== 200) return unavailable(query, httpCause(answer));
      const body = parseJson(answer.text);
      if (body === undefined) return unavailable(query, 'invalid JSON in the answer');
      if (!decisionCheck.Check(body)) return unavailable(query, `invalid answer: ${firstError(decisionCheck, body)}`);
      return trusted(query, body);
    } catch (error) {
      return unavailable(query, describeFailure(error));
    }
  }

  /**
   * Decides many queries (a model's parallel tool calls) in one round trip per 100 queries; the
   * answers are in the queries' order. Never throws, never allows on error.
   */
  async decideBatch(queries: readonly DecideQuery[]): Promise<ClientDecision[]> {
    const chunks: DecideQuery[][] = [];
    for (let start = 0; start < queries.length; start += MAX_BATCH_QUERIES) {
      chunks.push(queries.slice(start, start + MAX_BATCH_QUERIES));
    }
    const answers = await Promise.all(chunks.map((chunk) => this.decideChunk(chunk)));
    return answers.flat();
  }

  private async decideChunk(queries: DecideQuery[]): Promise<ClientDecision[]> {
    const denyAll = (cause: string) => queries.map((query) => unavailable(query, cause));
    try {
      const answer = await this.exchange(
        { method: 'POST', path: '/decide/batch', body: JSON.stringify({ queries }), retryOnStaleSocket: true },
        this.timeoutMs,
      );
      if (answer.status !== 200) return denyAll(httpCause(answer));
      const body = parseJson(answer.text);
      if (body === undefined) return denyAll('invalid JSON in the answer');
      const decisions = isJsonObject(body) ? body['decisions'] : undefined;
      if (!Array.isArray(decisions)) return denyAll('invalid answer: /decisions Expected array');
      if (decisions.length !== queries.length) {
        return denyAll(`the batch answer has ${decisions.length} decisions for ${queries.length} queries`);
      }
      // Each answer is checked like a /decide answer, so a call gets the same denial text either way.
      return queries.map((query, index) => {
        const decision: unknown = decisions[index];
        if (!decisionCheck.Check(decision)) return unavailable(query, `invalid answer: ${firstError(decisionCheck, decision)}`);
        return trusted(query, decision);
      });
    } catch (error) {
      return denyAll(describeFailure(error));
    }
  }

  // ------------------------------------------------------------------ admin and inspection

  /** `GET /catalog`: the 25 tools, their groups and the read-only default. */
  async catalog(): Promise<CatalogResponse> {
    return (await this.admin('GET', '/catalog', undefined, catalogCheck)).body;
  }

  /** `GET /projects`: every project with its status and revision. */
  async listProjects(): Promise<ProjectsResponse['projects']> {
    return (await this.admin('GET', '/projects', undefined, projectsCheck)).body.projects;
  }

  /** `GET /projects/:project/mcp-tool-permissions`, with the `ETag` to pass as `ifMatch`. */
  async getPermissions(project: string): Promise<PermissionsResult> {
    return this.permissionsCall('GET', permissionsPath(project), undefined, {});
  }

  /** Replaces the project default allowlist (a complete list, not a patch). */
  async putDefault(project: string, allowedTools: readonly string[], options: WriteOptions = {}): Promise<PermissionsResult> {
    return this.permissionsCall('PUT', `${permissionsPath(project)}/default`, { allowedTools }, options);
  }

  /** Removes the project default: agents without an override are back to the read-only set. */
  async deleteDefault(project: string, options: WriteOptions = {}): Promise<PermissionsResult> {
    return this.permissionsCall('DELETE', `${permissionsPath(project)}/default`, undefined, options);
  }

  /** Gives `agentId` its own allowlist, which replaces the project default for it. */
  async putAgent(
    project: string,
    agentId: string,
    allowedTools: readonly string[],
    options: WriteOptions = {},
  ): Promise<PermissionsResult> {
    return this.permissionsCall('PUT', agentPath(project, agentId), { allowedTools }, options);
  }

  /** Removes the override of `agentId`: it inherits the project default again (idempotent). */
  async deleteAgent(project: string, agentId: string, options: WriteOptions = {}): Promise<PermissionsResult> {
    return this.permissionsCall('DELETE', agentPath(project, agentId), undefined, options);
  }

  /** Replaces the whole policy document (also the repair path of an invalid file). */
  async putDocument(project: string, document: PolicyDocument, options: WriteOptions = {}): Promise<PermissionsResult> {
    return this.permissionsCall('PUT', permissionsPath(project), document, options);
  }

  /** `GET /projects/:project/requesters/:requester/effective`: what `requester` may call. */
  async effective(project: string, requester: string, options: { timeoutMs?: number } = {}): Promise<EffectivePolicy> {
    const path = `/projects/${segment(project)}/requesters/${segment(requester)}/effective`;
    return (await this.admin('GET', path, undefined, effectiveCheck, {}, options.timeoutMs)).body;
  }

  /** `GET /projects/:project/decisions`: the latest decisions, newest first. */
  async recentDecisions(project: string, filter: { allow?: boolean; limit?: number } = {}): Promise<RecentDecision[]> {
    const search = new URLSearchParams();
    if (filter.allow !== undefined) search.set('allow', String(filter.allow));
    if (filter.limit !== undefined) search.set('limit', String(filter.limit));
    const query = search.size === 0 ? '' : `?${search.toString()}`;
    return (await this.admin('GET', `/projects/${segment(project)}/decisions${query}`, undefined, recentCheck)).body.decisions;
  }

  /** Registers (or replaces) the short-lived policy of a `ticket-assistant:<project>:<issue>` requester. */
  async putEphemeral(project: string, requester: string, body: EphemeralPolicyBody): Promise<EphemeralPolicy> {
    return (await this.admin('PUT', ephemeralPath(project, requester), body, ephemeralCheck)).body;
  }

  /** Removes the ephemeral policy of `requester`: it is back to read-only. */
  async deleteEphemeral(project: string, requester: string): Promise<void> {
    await this.admin('DELETE', ephemeralPath(project, requester), undefined, undefined);
  }

  /** The ephemeral policies of a project that have not expired. */
  async listEphemeral(project: string): Promise<EphemeralPolicy[]> {
    return (await this.admin('GET', `/projects/${segment(project)}/ephemeral-policies`, undefined, ephemeralListCheck)).body.policies;
  }

  // ------------------------------------------------------------------ plumbing

  private async permissionsCall(
    method: ExchangeRequest['method'],
    path: string,
    body: unknown,
    options: WriteOptions,
  ): Promise<PermissionsResult> {
    const headers: Record<string, string> = {};
    if (options.ifMatch !== undefined) headers['if-match'] = quoteEtag(options.ifMatch);
    const answer = await this.admin(method, path, body, permissionsCheck, headers);
    const etagHeader = answer.headers['etag'];
    const etag = typeof etagHeader === 'string' ? unquoteEtag(etagHeader) : answer.body.revision;
    return { permissions: answer.body, etag, revision: answer.body.revision };
  }

  private async admin<T extends TSchema>(
    method: ExchangeRequest['method'],
    path: string,
    body: unknown,
    check: TypeCheck<T> | undefined,
    headers: Record<string, string> = {},
    timeoutMs = this.adminTimeoutMs,
  ): Promise<{ body: Static<T>; headers: Exchange['headers'] }> {
    let answer: Exchange;
    try {
      // Reads are retried on a stale socket; writes never (a replayed write could answer 412).
      const request: ExchangeRequest = { method, path, headers, retryOnStaleSocket: method === 'GET' };
      if (body !== undefined) request.body = JSON.stringify(body);
      answer = await this.exchange(request, timeoutMs);
    } catch (error) {
      throw new PdpError('pdp_unavailable', `${method} ${path}: policy service unreachable (${describeFailure(error)})`, {
        cause: error,
      });
    }
    const parsed = answer.text === '' ? undefined : parseJson(answer.text);
    if (answer.status < 200 || answer.status > 299) {
      if (errorBodyCheck.Check(parsed)) {
        throw new PdpError(parsed.error.code, parsed.error.message, { status: answer.status, details: parsed.error.details });
      }
      throw new PdpError('invalid_response', `${method} ${path}: ${httpCause(answer)}`, { status: answer.status });
    }
    if (check === undefined) return { body: parsed, headers: answer.headers };
    if (!check.Check(parsed)) {
      const what = parsed === undefined ? 'no JSON body' : firstError(check, parsed);
      throw new PdpError('invalid_response', `${method} ${path}: invalid answer: ${what}`, { status: answer.status });
    }
    return { body: parsed, headers: answer.headers };
  }

  private exchange(request: Omit<ExchangeRequest, 'headers'> & { headers?: Record<string, string> }, timeoutMs: number) {
    const headers: Record<string, string> = { ...this.baseHeaders, ...request.headers };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const full: ExchangeRequest = { ...request, path: this.pathPrefix + request.path, headers };
    return exchangeWithDeadline(this.pool, full, timeoutMs);
  }
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
      `the answer is about tool ${decision.tool.name} for requester ${JSON.stringify(decision.requester.id)} in project ${decision.project}, not the call asked about`,
    );
  }
  if (decision.reason !== 'allowed') return unavailable(query, `the answer allows with reason ${decision.reason}`);
  return decision;
}

function httpCause(answer: Exchange): string {
  const body = parseJson(answer.text);
  const code = errorBodyCheck.Check(body) ? `: ${body.error.code}` : '';
  return `HTTP ${answer.status}${code}`;
}

function describeFailure(error: unknown): string {
  if (error instanceof TransportFailure) return error.message;
  return error instanceof Error ? error.message : String(error);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function firstError(check: TypeCheck<TSchema>, value: unknown): string {
  const error = check.Errors(value).First();
  return error === undefined ? 'does not match the schema' : `${error.path || '/'} ${error.message}`;
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Path segments are always encoded: ids may contain `#`, spaces, `%` or `..`. */
function segment(value: string): string {
  return encodeURIComponent(value);
}

function permissionsPath(project: string): string {
  return `/projects/${segment(project)}/mcp-tool-permissions`;
}

function agentPath(project: string, agentId: string): string {
  return `${permissionsPath(project)}/agents/${segment(agentId)}`;
}

function ephemeralPath(project: string, requester: string): string {
  return `/projects/${segment(project)}/ephemeral-policies/${segment(requester)}`;
}

function quoteEtag(revision: string): string {
  return revision.startsWith('"') || revision.startsWith('W/') ? revision : `"${revision}"`;
}

function unquoteEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}
