/**
 * The one error the services and the stores throw when a request cannot be applied: a stable code
 * and details. It knows no HTTP status: server/http/error-handler.ts maps each code to one
 * (docs/api.md#http-api).
 */
import type { ErrorCode } from '../schemas/index.js';

/**
 * The API's codes, `write_conflict` (a write that kept racing, 409) and `invalid_ttl` (answered as
 * `invalid_request` by the approvals service).
 */
export type ServiceErrorCode = ErrorCode | 'write_conflict' | 'invalid_ttl';

export class ApiError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const unknownProject = (project: string): ApiError => new ApiError('unknown_project', `Unknown project ${JSON.stringify(project)}.`);
