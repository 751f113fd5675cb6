/** The one error type the admin methods of `PdpClient` throw. */

/** Codes of failures that happen before or outside the service's own error answers. */
export type TransportErrorCode = 'pdp_unavailable' | 'invalid_response';

/**
 * A failed admin call. `code` is the service's stable error code (`revision_mismatch`,
 * `invalid_tools`, `unknown_project`, `unauthorized`, ...: docs/api.md#http-api) when the service
 * answered with an error body, `pdp_unavailable` when it could not be reached in time, and
 * `invalid_response` when its answer did not have the documented shape.
 *
 * @example
 * ```ts
 * try {
 *   await admin.putAgent('demo', 'QA', ['idea_memory_write'], { ifMatch: etag });
 * } catch (error) {
 *   if (error instanceof PdpError && error.code === 'revision_mismatch') await reloadAndRetry();
 *   else throw error;
 * }
 * ```
 */
export class PdpError extends Error {
  override readonly name = 'PdpError';
  readonly code: string;
  readonly status: number | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: string,
    message: string,
    options: { status?: number | undefined; details?: Record<string, unknown> | undefined; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.details = options.details;
  }
}
