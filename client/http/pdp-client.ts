/**
 * The HTTP client of the policy decision service (docs/api.md#the-client-sdk). `decide`, `decideBatch` and
 * `check` never throw and never allow on error; the admin methods throw {@link PdpError}.
 */
import { DECIDE_BODY_LIMIT, MAX_BATCH_QUERIES, type DecideQuery, type PermissionsView } from '../../schemas/api.js';
import type { PolicyConditions } from '../../schemas/conditions.js';
import type { Allowlist, PolicyDocument } from '../../schemas/policy.js';
import {
  MAX_APPROVAL_WAIT_SECONDS,
  type ApprovalAnswer,
  type ApprovalAnswerBody,
  type ApprovalStatus,
  type ApprovalVia,
  type GrantCreateBody,
} from '../../schemas/approvals.js';
import { decisionFromAnswer, decisionsFromBatchAnswer, errorBodyOf, failureText, firstError, httpCause, parseJson } from './answers.js';
import { oneLine } from '../causes.js';
import { checkService, type CheckOptions, type CheckResult } from './check.js';
import { unavailable, type ClientDecision } from '../decision.js';
import {
  ENDPOINTS,
  pathOf,
  type AdminArgs,
  type AdminMethod,
  type AdminName,
  type AdminOptions,
  type AdminResult,
  type CallOptions,
  type Endpoint,
  type PermissionsResult,
  type WriteOptions,
} from './endpoints.js';
import { followEvents, type EventHandlers, type EventSubscription } from '../events/event-stream.js';
import { PdpError } from './errors.js';
import { checkOptions, checkToken, displayUrl, type PdpClientOptions } from './options.js';
import { trustedSocketConnector } from './socket-trust.js';
import { Deadline, Transport, type Exchange } from './transport.js';
import type { buildConnector } from 'undici';

export type { CallOptions, PermissionsResult, WriteOptions } from './endpoints.js';

/** Largest decision answer read (docs/api.md#the-client-sdk): a bigger one is refused before it is parsed. */
export const MAX_DECISION_BYTES = 64 * 1024;
/** Largest answer of an admin call (a permissions view of a thousand agents fits many times). */
const MAX_ADMIN_BYTES = 16 * 1024 * 1024;
/** The bytes of `{"queries":[]}` around a batch's queries. */
const BATCH_WRAPPER_BYTES = 14;

/** Queries sent in one `/decide/batch`, and their JSON texts (undefined: one that cannot be serialized, sent alone to fail). */
interface BatchChunk {
  readonly queries: DecideQuery[];
  readonly parts: string[] | undefined;
}

/**
 * Splits queries into batches of at most 100 whose body fits the service's limit, so that one query
 * with large arguments fails alone, as `decide` would, instead of taking its neighbours with it.
 */
function batchChunks(queries: readonly DecideQuery[]): BatchChunk[] {
  const chunks: BatchChunk[] = [];
  let current: { queries: DecideQuery[]; parts: string[]; bytes: number } = { queries: [], parts: [], bytes: BATCH_WRAPPER_BYTES };
  const close = () => {
    if (current.queries.length > 0) chunks.push({ queries: current.queries, parts: current.parts });
    current = { queries: [], parts: [], bytes: BATCH_WRAPPER_BYTES };
  };
  for (const query of queries) {
    let text: string;
    try {
      text = JSON.stringify(query);
    } catch {
      chunks.push({ queries: [query], parts: undefined });
      continue;
    }
    const bytes = Buffer.byteLength(text) + 1;
    if (current.queries.length === MAX_BATCH_QUERIES || current.bytes + bytes > DECIDE_BODY_LIMIT) close();
    current.queries.push(query);
    current.parts.push(text);
    current.bytes += bytes;
  }
  close();
  return chunks;
}

/**
 * Options of `putDefault` and `putAgent`: the tools on ask (run with the user's approval, docs/api.md#approvals-and-temporary-grants)
 * and the conditions on their arguments (docs/api.md#conditions-on-a-tools-arguments) beside the allowlist.
 */
export interface AllowlistWriteOptions extends WriteOptions {
  askTools?: readonly string[] | undefined;
  conditions?: PolicyConditions | undefined;
}

/** Options of {@link PdpClient.answerApproval}. */
export interface AnswerApprovalOptions {
  /** The token of this one call instead of the client's: the approver token (`PDP_APPROVER_TOKEN`). */
  token?: string | undefined;
  /** Where the user answered: `elicitation`, the MCP host's own form. */
  via?: ApprovalVia | undefined;
  signal?: AbortSignal | undefined;
  /** Default: the client's `adminTimeoutMs`. */
  timeoutMs?: number | undefined;
}

/** What one request carries besides its endpoint and path. */
interface SendOptions {
  body?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** Default: {@link MAX_ADMIN_BYTES}. */
  maxBodyBytes?: number | undefined;
  /** On connections of their own, never one of the places decisions queue for. */
  longPoll?: boolean | undefined;
}

/** What an admin method's wrapper adds to its request: a query, headers, a long-poll. */
type RequestExtras = Pick<SendOptions, 'headers' | 'longPoll'> & { query?: URLSearchParams | undefined };

/**
 * Client of the IdeA MCP tool permission service, on `connections` keep-alive undici connections.
 *
 * At most `connections` requests are on the wire at once; later calls wait their turn in a queue
 * that a call leaves the moment its deadline passes, so a burst far beyond that capacity may deny
 * some calls (fail closed) but never leaves the client slow afterwards. For a model's parallel tool
 * calls, prefer one {@link PdpClient.decideBatch} to many concurrent {@link PdpClient.decide}.
 *
 * @example
 * ```ts
 * import { PdpClient } from 'idea-mcp-permissions-client';
 *
 * const pdp = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.PDP_DECIDE_TOKEN });
 * const ready = await pdp.check({ project: 'demo' });
 * if (!ready.ok) console.error(ready.message); // wrong URL, token or project: every call would be denied
 *
 * const decision = await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
 * if (!decision.allow) {
 *   // "Tool idea_memory_write is denied for agent QA in project demo (policy: builtin-read-only). ..."
 *   return { content: [{ type: 'text', text: decision.message }], isError: true };
 * }
 * await pdp.close();
 * ```
 */
export class PdpClient {
  /** Deadline of one decision or batch, in milliseconds. */
  readonly timeoutMs: number;
  /** Deadline of one admin call, in milliseconds. */
  readonly adminTimeoutMs: number;
  /** `baseUrl` without a trailing slash, as messages show it. */
  readonly baseUrl: string;
  private readonly transport: Transport;
  private readonly pathPrefix: string;
  private readonly baseHeaders: Record<string, string>;
  private readonly jsonHeaders: Record<string, string>;
  private closing: Promise<void> | undefined;
  private readonly origin: string;
  /** The unix socket's connector, which checks the socket before each new connection; undefined over TCP. */
  private readonly connect: buildConnector.connector | undefined;
  private readonly subscriptions = new Set<EventSubscription>();

  /** @throws TypeError or RangeError for a `baseUrl` that is not an absolute http(s) URL, or a bad duration. */
  constructor(options: PdpClientOptions) {
    const checked = checkOptions(options);
    this.timeoutMs = checked.timeoutMs;
    this.adminTimeoutMs = checked.adminTimeoutMs;
    this.baseUrl = displayUrl(checked.url);
    this.pathPrefix = checked.url.pathname.replace(/\/+$/, '');
    this.baseHeaders = { accept: 'application/json' };
    if (checked.token !== undefined) this.baseHeaders.authorization = `Bearer ${checked.token}`;
    this.jsonHeaders = { ...this.baseHeaders, 'content-type': 'application/json' };
    this.origin = checked.url.origin;
    this.connect = checked.socketPath === undefined ? undefined : trustedSocketConnector(checked.socketPath, checked.logger);
    this.transport = new Transport(this.origin, checked.connections, {
      backstopMs: Math.max(this.timeoutMs, this.adminTimeoutMs),
      maxBodyBytes: MAX_ADMIN_BYTES,
      connect: this.connect,
    });
  }

  /**
   * Closes the sockets once the calls on the wire are over (each within its deadline). Later
   * decisions are denied (`pdp_unavailable`), later admin calls throw. Calling it again is harmless.
   */
  close(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.close();
    this.closing ??= this.transport.close();
    return this.closing;
  }

  /**
   * Follows the service's live events (`GET /events`, of one project or of all): `policy` events
   * once per project when the stream opens and on every change visible to decisions, `approval`
   * events. The stream is reopened after a growing delay (at most 5 s) whenever it fails or ends,
   * on its own connection; `close()` of the subscription or of the client ends it.
   *
   * @example
   * ```ts
   * const events = pdp.watchEvents({ project: 'demo', onPolicy: (event) => console.log(event.revision, event.status) });
   * // later
   * events.close();
   * ```
   */
  watchEvents(options: EventHandlers & { project?: string | undefined }): EventSubscription {
    if (this.closing !== undefined) return { close: () => undefined };
    const query = options.project === undefined ? '' : `?project=${encodeURIComponent(options.project)}`;
    const subscription = followEvents(
      { origin: this.origin, path: `${this.pathPrefix}/events${query}`, headers: this.baseHeaders, connect: this.connect },
      options,
      () => this.subscriptions.delete(subscription),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Asks whether `query.requester` may call `query.tool` in `query.project`. Never throws, never
   * allows on error: a failure is a denial with reason `pdp_unavailable` (no usable answer in time)
   * or `pdp_rejected` (the service says the caller is wrong: URL prefix, token, query).
   *
   * @example
   * ```ts
   * const decision = await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_ticket_update', arguments: { issueRef: '#82' } });
   * if (decision.allow) await runTool();
   * ```
   */
  async decide(query: DecideQuery, options: CallOptions = {}): Promise<ClientDecision> {
    const deadline = new Deadline(this.timeoutMs, options.signal);
    try {
      const answer = await this.send(ENDPOINTS.decide, ENDPOINTS.decide.route, deadline, {
        body: JSON.stringify(query),
        maxBodyBytes: MAX_DECISION_BYTES,
      });
      const decision = decisionFromAnswer(query, answer);
      // The answer counts only if it was complete, parsed and checked within the deadline.
      const late = deadline.lateFailure();
      return late === undefined ? decision : unavailable(query, late.message);
    } catch (error) {
      return unavailable(query, failureText(error));
    } finally {
      deadline.end();
    }
  }

  /**
   * Decides many queries (a model's parallel tool calls, a fan-out) in one round trip per 100
   * queries (or per 64 KiB of them), each answer exactly what {@link PdpClient.decide} would give; the answers are in the
   * queries' order. Never throws, never allows on error. One batch takes one place in the request
   * queue where N concurrent `decide()` calls take N.
   *
   * @example
   * ```ts
   * const tools = ['idea_ticket_read', 'idea_memory_write', 'idea_ticket_create'];
   * const decisions = await pdp.decideBatch(tools.map((tool) => ({ project: 'demo', requester: 'QA', tool })));
   * const callable = tools.filter((_tool, index) => decisions[index]?.allow === true);
   * ```
   */
  async decideBatch(queries: readonly DecideQuery[], options: CallOptions = {}): Promise<ClientDecision[]> {
    const answers = await Promise.all(batchChunks(queries).map((chunk) => this.decideChunk(chunk, options)));
    return answers.flat();
  }

  private async decideChunk({ queries, parts }: BatchChunk, options: CallOptions): Promise<ClientDecision[]> {
    const deadline = new Deadline(this.timeoutMs, options.signal);
    try {
      const body = parts === undefined ? JSON.stringify({ queries }) : `{"queries":[${parts.join(',')}]}`;
      const answer = await this.send(ENDPOINTS.decideBatch, ENDPOINTS.decideBatch.route, deadline, {
        body,
        maxBodyBytes: MAX_DECISION_BYTES * queries.length,
      });
      const decisions = decisionsFromBatchAnswer(queries, answer);
      const late = deadline.lateFailure();
      return late === undefined ? decisions : queries.map((query) => unavailable(query, late.message));
    } catch (error) {
      const cause = failureText(error);
      return queries.map((query) => unavailable(query, cause));
    } finally {
      deadline.end();
    }
  }

  /**
   * Tells an enforcement point at boot whether the URL, the token and (when given) the project are
   * right, so a misconfiguration is reported once instead of as a denial of every call. Never throws.
   *
   * @example
   * ```ts
   * const ready = await pdp.check({ project: 'demo' });
   * if (!ready.ok) logger.error({ reason: ready.reason }, ready.message);
   * ```
   */
  async check(options: CheckOptions = {}): Promise<CheckResult> {
    const deadline = new Deadline(options.timeoutMs ?? Math.max(this.timeoutMs, 2_000), options.signal);
    try {
      return await checkService(this.baseUrl, options.project, () =>
        this.send(ENDPOINTS.listProjects, ENDPOINTS.listProjects.route, deadline),
      );
    } finally {
      deadline.end();
    }
  }

  // ------------------------------------------------------------------ admin and inspection
  // Each admin method is its row of ENDPOINTS, `(...params, body?, options?)` typed from the row's
  // schemas; a few keep a signature of their own as a wrapper of the same call.

  /** `GET /catalog`: the 25 tools, their groups and the read-only default. */
  readonly catalog = this.admin('catalog');

  /** `GET /projects`: every project with its status and revision. */
  readonly listProjects = this.admin('listProjects');

  /** `getPermissions(project)`: `GET /projects/:project/mcp-tool-permissions`, with the `ETag` to pass as `ifMatch`. */
  readonly getPermissions = this.admin('getPermissions');

  /** `putDefault(project, allowedTools, { askTools, ifMatch })`: replaces the project default allowlist (a complete list, not a patch). */
  async putDefault(
    project: string,
    allowedTools: readonly string[],
    options: AllowlistWriteOptions = {},
  ): Promise<AdminResult<'putDefault'>> {
    return await this.call('putDefault', [project, allowlistBody(allowedTools, options), options]);
  }

  /** `deleteDefault(project, { ifMatch })`: agents without an override are back to the read-only set. */
  readonly deleteDefault = this.admin('deleteDefault');

  /**
   * Gives `agentId` its own allowlist, which replaces the project default for it.
   *
   * @example
   * ```ts
   * const admin = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: adminToken });
   * const { etag } = await admin.getPermissions('demo');
   * await admin.putAgent('demo', 'QA', ['idea_ticket_read', 'idea_memory_write'], { ifMatch: etag });
   * ```
   */
  async putAgent(
    project: string,
    agentId: string,
    allowedTools: readonly string[],
    options: AllowlistWriteOptions = {},
  ): Promise<AdminResult<'putAgent'>> {
    return await this.call('putAgent', [project, agentId, allowlistBody(allowedTools, options), options]);
  }

  /** `deleteAgent(project, agentId, { ifMatch })`: the agent inherits the project default again (idempotent). */
  readonly deleteAgent = this.admin('deleteAgent');

  /** `putDocument(project, document, { ifMatch })`: replaces the whole policy document (also the repair path of an invalid file). */
  readonly putDocument = this.admin('putDocument');

  /** `effective(project, requester, { timeoutMs, signal })`: `GET .../requesters/:requester/effective`, what `requester` may call. */
  readonly effective = this.admin('effective');

  /** `GET /projects/:project/decisions`: the latest decisions, newest first. */
  async recentDecisions(project: string, filter: { allow?: boolean; limit?: number } = {}): Promise<AdminResult<'recentDecisions'>> {
    const query = new URLSearchParams();
    if (filter.allow !== undefined) query.set('allow', String(filter.allow));
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    return await this.call('recentDecisions', [project], { query });
  }

  /**
   * `POST /projects/:project/mcp-tool-permissions/preview` (decide or admin token): what `document`
   * would change before it is saved, writing nothing and opening no approval request: its problems
   * (`valid: false` and `errors` as `idea-pdp check` prints them when it is invalid), the agents
   * whose effective lists change (`"*default"` for the project default), and the project's recent
   * decisions decided again under it, grouped by requester and tool, biggest `calls` first.
   *
   * @example
   * ```ts
   * const { valid, replay } = await client.preview('demo', proposed);
   * if (valid && replay.counts.allowToDeny > 0) {
   *   const [top] = replay.changed;
   *   console.log(`would have denied ${replay.counts.allowToDeny} recent calls, e.g. ${top?.requester} · ${top?.tool} ×${top?.calls}`);
   * }
   * ```
   * @throws {@link PdpError} `unknown_project`, `unauthorized`, `pdp_unavailable`, `invalid_response`.
   */
  async preview(project: string, document: PolicyDocument, options: AdminOptions<'preview'> = {}): Promise<AdminResult<'preview'>> {
    return await this.call('preview', [project, { document }, options]);
  }

  /** `putEphemeral(project, requester, body)`: registers (or replaces) the short-lived policy of a `ticket-assistant:...` requester. */
  readonly putEphemeral = this.admin('putEphemeral');

  /** Removes the ephemeral policy of `requester`: it is back to read-only. */
  async deleteEphemeral(project: string, requester: string): Promise<void> {
    await this.call('deleteEphemeral', [project, requester]);
  }

  /** `listEphemeral(project)`: the ephemeral policies of a project that have not expired. */
  readonly listEphemeral = this.admin('listEphemeral');

  // ------------------------------------------------------------------ approvals and grants (docs/api.md#approvals-and-temporary-grants)

  /** `GET /projects/:project/approvals`: pending requests and the latest closed ones, newest first; `status` keeps one state. */
  async listApprovals(project: string, status?: ApprovalStatus): Promise<AdminResult<'listApprovals'>> {
    return await this.call('listApprovals', [project], { query: new URLSearchParams(status === undefined ? {} : { status }) });
  }

  /**
   * `GET /projects/:project/approvals/:id`: one request. With `waitSeconds` (at most 60) it is a
   * long-poll that answers once the request is no longer pending, or changes, or after that long;
   * it runs on a connection of its own, so waiting never delays a decision. Its deadline is
   * `timeoutMs`, by default `adminTimeoutMs` plus the wait; `signal` ends it at once.
   *
   * @example
   * ```ts
   * const decision = await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
   * if (decision.reason === 'approval_required' && decision.approval !== undefined) {
   *   const approval = await pdp.getApproval('demo', decision.approval.id, { waitSeconds: 30 });
   *   if (approval.status === 'approved') await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
   * }
   * ```
   */
  async getApproval(
    project: string,
    id: string,
    options: AdminOptions<'getApproval'> & { waitSeconds?: number } = {},
  ): Promise<AdminResult<'getApproval'>> {
    const waitSeconds = options.waitSeconds ?? 0;
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > MAX_APPROVAL_WAIT_SECONDS) {
      throw new RangeError(
        `getApproval: waitSeconds must be a whole number from 0 to ${String(MAX_APPROVAL_WAIT_SECONDS)} (got ${String(waitSeconds)})`,
      );
    }
    const query = new URLSearchParams(waitSeconds === 0 ? {} : { waitSeconds: String(waitSeconds) });
    const call = { timeoutMs: options.timeoutMs ?? this.adminTimeoutMs + waitSeconds * 1000, signal: options.signal };
    return await this.call('getApproval', [project, id, call], { query, longPoll: waitSeconds > 0 });
  }

  /**
   * `POST /projects/:project/approvals/:id`: `once` lets the next matching call run, `for` grants
   * the tool for `ttlSeconds` (required then), `always` adds it to the agent's allowlist, `deny`
   * refuses. A request no longer pending throws `approval_closed`. With the admin token (the
   * client's) any answer; with `options.token` set to the approver token, `once`, `for` up to
   * 28,800 s and `deny` only (else `forbidden`). `options.via: "elicitation"` says the user
   * answered in the MCP host's own form (logged and listed with the answer).
   *
   * @example
   * ```ts
   * // An MCP server that asked the user itself, holding the approver token and not the admin token:
   * await pdp.answerApproval('demo', approvalId, 'once', undefined, { token: process.env.PDP_APPROVER_TOKEN, via: 'elicitation' });
   * ```
   */
  async answerApproval(
    project: string,
    id: string,
    answer: ApprovalAnswer,
    ttlSeconds?: number,
    options: AnswerApprovalOptions = {},
  ): Promise<AdminResult<'answerApproval'>> {
    const body: ApprovalAnswerBody = { answer };
    if (ttlSeconds !== undefined) body.ttlSeconds = ttlSeconds;
    if (options.via !== undefined) body.via = options.via;
    const token = options.token === undefined ? undefined : checkToken(options.token, 'answerApproval: options.token');
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    return await this.call('answerApproval', [project, id, body, options], { headers });
  }

  /** `listGrants(project)`: `GET /projects/:project/grants`, the live temporary grants, newest first. */
  readonly listGrants = this.admin('listGrants');

  /** `POST /projects/:project/grants` (admin token): lets an agent call `tools` for `ttlSeconds` (1 to 86,400). */
  async createGrant(project: string, grant: GrantCreateBody): Promise<AdminResult<'createGrant'>> {
    // Only the three fields: the route refuses any other, and a caller may pass a whole Grant.
    return await this.call('createGrant', [project, { requester: grant.requester, tools: [...grant.tools], ttlSeconds: grant.ttlSeconds }]);
  }

  /**
   * `revokeGrant(project, id)`: `DELETE /projects/:project/grants/:id` (admin token): the next call
   * is decided without it. Answers the revoked grant.
   */
  readonly revokeGrant = this.admin('revokeGrant');

  /** `projectCatalog(project)`: `GET /projects/:project/catalog`, IdeA's tools and those the project's servers file declares. */
  readonly projectCatalog = this.admin('projectCatalog');

  /** `listServers(project)`: `GET /projects/:project/servers`, declared servers and the tools servers listed undeclared. */
  readonly listServers = this.admin('listServers');

  /**
   * `reportDiscovered(project, server, { tools })`: `POST /projects/:project/servers/:server/discovered`
   * (decide token), what a server's `tools/list` held; the service keeps the undeclared tools to show, never to allow.
   */
  readonly reportDiscovered = this.admin('reportDiscovered');

  // ------------------------------------------------------------------ plumbing

  /** The admin method of a row of {@link ENDPOINTS}. */
  private admin<Name extends AdminName>(name: Name): AdminMethod<Name> {
    return (...args) => this.call(name, args);
  }

  /** The one typed call of every admin method: the row of `name` maps `args` to its request and its answer to the result. */
  private async call<Name extends AdminName>(name: Name, args: AdminArgs<Name>, extras: RequestExtras = {}): Promise<AdminResult<Name>> {
    const endpoint: Endpoint = ENDPOINTS[name];
    const rest: unknown[] = args.slice(endpoint.params.length);
    const body = endpoint.shape.body === undefined ? undefined : rest.shift();
    const options = (rest[0] ?? {}) as AdminOptions & WriteOptions;
    const headers = options.ifMatch === undefined ? extras.headers : { ...extras.headers, 'if-match': quoteEtag(options.ifMatch) };
    const path = pathOf(endpoint, args, extras.query);
    const answer = await this.request(endpoint, path, { ...extras, body, headers, timeoutMs: options.timeoutMs, signal: options.signal });
    // The row's types say what each answers; the schema check of the answer made them true.
    if (endpoint.shape.etag === true) return permissionsResult(answer.body as PermissionsView, answer.headers.etag) as AdminResult<Name>;
    const { list } = endpoint.shape;
    return (list === undefined ? answer.body : (answer.body as Record<string, unknown>)[list]) as AdminResult<Name>;
  }

  /** One admin request: its answer checked against the endpoint's schema, any failure a {@link PdpError}. */
  private async request(
    endpoint: Endpoint,
    path: string,
    options: RequestExtras & { body: unknown; timeoutMs: number | undefined; signal: AbortSignal | undefined },
  ): Promise<{ body: unknown; headers: Exchange['headers'] }> {
    const what = oneLine(`${endpoint.method} ${path}`, 120);
    const deadline = new Deadline(options.timeoutMs ?? this.adminTimeoutMs, options.signal);
    let answer: Exchange;
    try {
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      answer = await this.send(endpoint, path, deadline, { headers: options.headers, longPoll: options.longPoll, body });
    } catch (error) {
      throw new PdpError('pdp_unavailable', `${what}: policy service unreachable (${failureText(error)})`, { cause: error });
    } finally {
      deadline.end();
    }
    const parsed = parseJson(answer.text);
    if (answer.status < 200 || answer.status > 299) {
      const error = errorBodyOf(answer);
      if (error !== undefined) throw new PdpError(error.code, error.message, { status: answer.status, details: error.details });
      throw new PdpError('invalid_response', `${what}: ${httpCause(answer)}`, { status: answer.status });
    }
    if (!endpoint.answer.Check(parsed)) {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an empty body parses to undefined
      const problem = parsed === undefined ? 'no JSON body' : firstError(endpoint.answer, parsed);
      throw new PdpError('invalid_response', `${what}: invalid answer: ${problem}`, { status: answer.status });
    }
    return { body: parsed, headers: answer.headers };
  }

  /** The one way a request goes out: every call, decision or admin, under its deadline. */
  private send(endpoint: Endpoint, path: string, deadline: Deadline, options: SendOptions = {}): Promise<Exchange> {
    const { body } = options;
    // A decision shares one headers object: a burst holds thousands of requests at once.
    let headers = body === undefined ? this.baseHeaders : this.jsonHeaders;
    if (options.headers !== undefined) headers = { ...headers, ...options.headers };
    const request = {
      method: endpoint.method,
      path: this.pathPrefix + path,
      headers,
      body,
      maxBodyBytes: options.maxBodyBytes ?? MAX_ADMIN_BYTES,
      retryOnStaleSocket: endpoint.retryable,
      longPoll: options.longPoll,
    };
    return this.transport.send(request, deadline);
  }
}

function allowlistBody(allowedTools: readonly string[], options: AllowlistWriteOptions): Allowlist {
  const body: Allowlist = { allowedTools: [...allowedTools] };
  if (options.askTools !== undefined) body.askTools = [...options.askTools];
  if (options.conditions !== undefined) body.conditions = options.conditions;
  return body;
}

function permissionsResult(view: PermissionsView, etag: Exchange['headers'][string]): PermissionsResult {
  return { permissions: view, etag: typeof etag === 'string' ? unquoteEtag(etag) : view.revision, revision: view.revision };
}

function quoteEtag(revision: string): string {
  return revision.startsWith('"') || revision.startsWith('W/') ? revision : `"${revision}"`;
}

function unquoteEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}
