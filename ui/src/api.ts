/**
 * The panel's only way to the service: the public REST API of SPEC §5, same origin. The token
 * (admin, or decide token for read-only use) is sent on every request when the user gave one.
 */
import type { CatalogResponse, PermissionsView, ProjectsResponse } from '../../schemas/api.js';

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

/** A permissions view with the revision to send back in `If-Match`. */
export interface VersionedView {
  view: PermissionsView;
  revision: string;
}

/** The API root: the page is served at `<root>/ui/`, the API lives at `<root>/`. */
export function apiRoot(pathname: string): string {
  const root = pathname.replace(/\/ui(\/.*)?$/, '/');
  return root.endsWith('/') ? root : `${root}/`;
}

export class PermissionsApi {
  constructor(
    private readonly root: string,
    private readonly token: () => string | null,
  ) {}

  catalog(): Promise<CatalogResponse> {
    return this.json<CatalogResponse>('GET', 'catalog');
  }

  projects(): Promise<ProjectsResponse> {
    return this.json<ProjectsResponse>('GET', 'projects');
  }

  permissions(project: string): Promise<VersionedView> {
    return this.versioned('GET', this.permissionsPath(project));
  }

  /** `PUT .../default` or `.../agents/:agentId` with a complete allowlist, guarded by the revision. */
  putAllowlist(project: string, agentId: string | null, allowedTools: string[], revision: string): Promise<VersionedView> {
    return this.versioned('PUT', this.targetPath(project, agentId), revision, { allowedTools });
  }

  /** `DELETE .../default` (back to read-only) or `.../agents/:agentId` (the agent inherits again). */
  deleteTarget(project: string, agentId: string | null, revision: string): Promise<VersionedView> {
    return this.versioned('DELETE', this.targetPath(project, agentId), revision);
  }

  private permissionsPath(project: string): string {
    return `projects/${encodeURIComponent(project)}/mcp-tool-permissions`;
  }

  private targetPath(project: string, agentId: string | null): string {
    const base = this.permissionsPath(project);
    return agentId === null ? `${base}/default` : `${base}/agents/${encodeURIComponent(agentId)}`;
  }

  private async versioned(method: string, path: string, revision?: string, body?: unknown): Promise<VersionedView> {
    const response = await this.request(method, path, revision, body);
    const view = (await response.json()) as PermissionsView;
    const etag = response.headers.get('ETag');
    // The ETag is the quoted revision; fall back to the body when a proxy dropped the header.
    const revisionFromEtag = etag === null ? null : etag.replace(/^W\//, '').replace(/^"|"$/g, '');
    return { view, revision: revisionFromEtag ?? view.revision };
  }

  private async json<T>(method: string, path: string): Promise<T> {
    const response = await this.request(method, path);
    return (await response.json()) as T;
  }

  private async request(method: string, path: string, revision?: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = this.token();
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    if (revision !== undefined) headers['If-Match'] = `"${revision}"`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(this.root + path, {
        method,
        headers,
        cache: 'no-store',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError(0, 'network_error', `Service injoignable (${error instanceof Error ? error.message : String(error)}).`);
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
  return new ApiError(response.status, `http_${response.status}`, `Erreur HTTP ${response.status}.`);
}
