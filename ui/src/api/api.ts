/**
 * The panel's only way to the service: the public REST API (docs/api.md#http-api, docs/api.md#security), same origin. The
 * token (admin, or decide token for read-only use) is sent on every request when the user gave one.
 */
import type { AllowlistBody, CatalogResponse, PermissionsView, ProjectsResponse, RecentDecisionsResponse } from '../../../schemas/api.js';
import type {
  Approval,
  ApprovalAnswer,
  ApprovalAnswerResponse,
  ApprovalsResponse,
  Grant,
  GrantsResponse,
} from '../../../schemas/approvals.js';
import type { PreviewResponse } from '../../../schemas/policy-as-code.js';
import type { PolicyDocument } from '../../../schemas/policy.js';
import type { DeclareToolBody, ServersResponse } from '../../../schemas/servers.js';

/** An API failure, with the stable `error.code` of the service (or a local code for the network). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The last valid document the service saw, when the view carries it (for display and repair only). */
export interface LastValid {
  revision: string;
  document: PolicyDocument;
}

/** The permissions view, with the optional `lastValid` a newer service adds to invalid projects. */
export type PanelView = PermissionsView & { lastValid?: LastValid | null };

/** A permissions view with the revision to send back in `If-Match`. */
export interface VersionedView {
  view: PanelView;
  revision: string;
}

/** Which token the service recognised (`GET /whoami`). */
export type Role = 'admin' | 'decide' | 'anonymous';

/** The API root: the page is served at `<root>/ui/`, the API lives at `<root>/`. */
export function apiRoot(pathname: string): string {
  const root = pathname.replace(/\/ui(\/.*)?$/, '/');
  return root.endsWith('/') ? root : `${root}/`;
}

interface RequestOptions {
  revision?: string;
  body?: unknown;
  /** A token to present instead of the session's (checking a token before keeping it). */
  token?: string | null;
}

export class PermissionsApi {
  constructor(
    private readonly root: string,
    private readonly token: () => string | null,
  ) {}

  /** The URL of the live events stream (read by {@link LiveStream}, not through {@link request}). */
  eventsUrl(): string {
    return `${this.root}events`;
  }

  catalog(): Promise<CatalogResponse> {
    return this.json<CatalogResponse>('GET', 'catalog');
  }

  /** IdeA's tools and those the project's `.ideai/mcp-servers.json` declares (docs/api.md#other-mcp-servers-tools). */
  projectCatalog(project: string): Promise<CatalogResponse> {
    return this.json<CatalogResponse>('GET', `${this.projectPath(project)}/catalog`);
  }

  /** Declared servers, and the tools servers listed that the catalog does not declare. */
  servers(project: string): Promise<ServersResponse> {
    return this.json<ServersResponse>('GET', `${this.projectPath(project)}/servers`);
  }

  /** Declares a server's tool (admin token), guarded by the servers file's revision (the catalog's `version`). */
  declareTool(project: string, server: string, tool: string, body: DeclareToolBody, version: string): Promise<ServersResponse> {
    const path = `${this.projectPath(project)}/servers/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool)}`;
    return this.json<ServersResponse>('PUT', path, { revision: version, body });
  }

  projects(): Promise<ProjectsResponse> {
    return this.json<ProjectsResponse>('GET', 'projects');
  }

  /** The role of `token` (an authenticated read); a wrong token is `401 unauthorized`. */
  async whoami(token: string | null): Promise<Role> {
    const body = await this.json<{ role?: unknown }>('GET', 'whoami', { token });
    if (body.role === 'admin' || body.role === 'decide' || body.role === 'anonymous') return body.role;
    // The approver token answers approvals from an MCP host only: the panel cannot even read with it.
    if (body.role === 'approver') throw new ApiError(403, 'forbidden', 'The approver token cannot open the panel.');
    throw new ApiError(200, 'unexpected_response', `GET /whoami answered an unknown role (${JSON.stringify(body.role)}).`);
  }

  permissions(project: string): Promise<VersionedView> {
    return this.versioned('GET', this.permissionsPath(project));
  }

  /** `PUT .../default` or `.../agents/:agentId` with complete lists (not a patch), guarded by the revision. */
  putAllowlist(project: string, agentId: string | null, lists: AllowlistBody, revision: string): Promise<VersionedView> {
    return this.versioned('PUT', this.targetPath(project, agentId), { revision, body: lists });
  }

  /** `DELETE .../default` (back to read-only) or `.../agents/:agentId` (the agent inherits again). */
  deleteTarget(project: string, agentId: string | null, revision: string): Promise<VersionedView> {
    return this.versioned('DELETE', this.targetPath(project, agentId), { revision });
  }

  /** The whole-document `PUT`: the repair path of an invalid file. */
  putDocument(project: string, document: PolicyDocument, revision: string): Promise<VersionedView> {
    return this.versioned('PUT', this.permissionsPath(project), { revision, body: document });
  }

  /**
   * What a proposed document would change (docs/api.md#policy-as-code-idea-pdp-and-previews):
   * nothing is written, the read token is enough.
   */
  preview(project: string, document: PolicyDocument): Promise<PreviewResponse> {
    return this.json<PreviewResponse>('POST', `${this.permissionsPath(project)}/preview`, { body: { document } });
  }

  /** The pending approval requests of a project (docs/api.md#approvals-and-temporary-grants). */
  approvals(project: string): Promise<ApprovalsResponse> {
    return this.json<ApprovalsResponse>('GET', `${this.projectPath(project)}/approvals?status=pending`);
  }

  /** One approval request, pending or closed: how it ended. */
  approval(project: string, id: string): Promise<Approval> {
    return this.json<Approval>('GET', `${this.projectPath(project)}/approvals/${encodeURIComponent(id)}`);
  }

  /** Answers a request (admin token only): `once`, `for` (with `ttlSeconds`), `always` or `deny`. */
  answerApproval(project: string, id: string, answer: ApprovalAnswer, ttlSeconds?: number): Promise<ApprovalAnswerResponse> {
    const body = ttlSeconds === undefined ? { answer } : { answer, ttlSeconds };
    return this.json<ApprovalAnswerResponse>('POST', `${this.projectPath(project)}/approvals/${encodeURIComponent(id)}`, { body });
  }

  /** The recent denials of a project, newest first (docs/api.md#recent-decisions). */
  recentDenials(project: string, limit: number): Promise<RecentDecisionsResponse> {
    return this.json<RecentDecisionsResponse>('GET', `${this.projectPath(project)}/decisions?allow=false&limit=${limit}`);
  }

  grants(project: string): Promise<GrantsResponse> {
    return this.json<GrantsResponse>('GET', `${this.projectPath(project)}/grants`);
  }

  revokeGrant(project: string, id: string): Promise<Grant> {
    return this.json<Grant>('DELETE', `${this.projectPath(project)}/grants/${encodeURIComponent(id)}`);
  }

  private projectPath(project: string): string {
    return `projects/${encodeURIComponent(project)}`;
  }

  private permissionsPath(project: string): string {
    return `${this.projectPath(project)}/mcp-tool-permissions`;
  }

  private targetPath(project: string, agentId: string | null): string {
    const base = this.permissionsPath(project);
    return agentId === null ? `${base}/default` : `${base}/agents/${encodeURIComponent(agentId)}`;
  }

  private async versioned(method: string, path: string, options: RequestOptions = {}): Promise<VersionedView> {
    const response = await this.request(method, path, options);
    const view = (await response.json()) as PanelView;
    const etag = response.headers.get('ETag');
    // The ETag is the quoted revision; fall back to the body when a proxy dropped the header.
    const revisionFromEtag = etag === null ? null : etag.replace(/^W\//, '').replace(/^"|"$/g, '');
    return { view, revision: revisionFromEtag ?? view.revision };
  }

  private async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, options);
    return (await response.json()) as T;
  }

  private async request(method: string, path: string, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = options.token === undefined ? this.token() : options.token;
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (options.revision !== undefined) headers['If-Match'] = `"${options.revision}"`;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(this.root + path, {
        method,
        headers,
        cache: 'no-store',
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
    } catch (error) {
      throw new ApiError(0, 'network_error', error instanceof Error ? error.message : String(error));
    }
    if (response.ok) return response;
    throw await toApiError(response);
  }
}

async function toApiError(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = body.error;
    if (error !== undefined && typeof error.code === 'string') {
      const details = typeof error.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined;
      return new ApiError(response.status, error.code, typeof error.message === 'string' ? error.message : error.code, details);
    }
  } catch {
    // Not JSON: fall through to a generic error carrying the HTTP status.
  }
  return new ApiError(response.status, `http_${response.status}`, `HTTP ${response.status} ${response.statusText}`.trim());
}

/** Any thrown value as an {@link ApiError} (a bug in the page becomes `client_error`). */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, 'client_error', error instanceof Error ? error.message : String(error));
}
