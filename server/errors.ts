/**
 * The error the services throw when a request cannot be applied: a stable code of the API's one
 * error shape (docs/api.md §5) and details. It knows no HTTP status: server/http/error-handler.ts
 * maps each code to one.
 */
import type { ErrorCode } from '../schemas/index.js';

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const unknownProject = (project: string): ApiError => new ApiError('unknown_project', `Unknown project ${JSON.stringify(project)}.`);
