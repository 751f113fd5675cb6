/** Why a write of a project's policy file was refused or failed; the HTTP layer maps each code to a status. */
export type ProjectWriteErrorCode = 'revision_mismatch' | 'policy_invalid' | 'write_failed' | 'write_conflict';

export class ProjectWriteError extends Error {
  constructor(
    readonly code: ProjectWriteErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ProjectWriteError';
  }
}
