/** The one application error type: a stable code, an HTTP status and optional details (SPEC §5). */
import type { ErrorCode } from '../schemas/index.js';

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const unknownProject = (project: string): AppError =>
  new AppError(404, 'unknown_project', `Unknown project ${JSON.stringify(project)}.`);
