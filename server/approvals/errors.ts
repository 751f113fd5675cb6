/** Why an approval or grant operation was refused or failed; the HTTP layer maps each code to a status. */
export type ApprovalsErrorCode =
  'not_found' | 'approval_closed' | 'invalid_ttl' | 'invalid_tools' | 'invalid_requester' | 'limit_exceeded' | 'write_failed';

export class ApprovalsError extends Error {
  constructor(
    readonly code: ApprovalsErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApprovalsError';
  }
}
