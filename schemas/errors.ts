/** The one error shape of the HTTP API and its stable codes (docs/api.md#http-api). */
import { Type, type Static } from '@sinclair/typebox';

export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'forbidden_host',
  'not_found',
  'unknown_project',
  'invalid_tools',
  'invalid_conditions',
  'invalid_limits',
  'invalid_agent_id',
  'invalid_requester',
  'revision_mismatch',
  'policy_invalid',
  'payload_too_large',
  'unsupported_media_type',
  'write_failed',
  'limit_exceeded',
  'approval_closed',
  'too_many_streams',
  'rate_limited',
  'ui_not_built',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable snake_case code, one of ERROR_CODES.' }),
      message: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'ErrorBody', description: 'Every error the API answers has this shape.' },
);
export type ErrorBody = Static<typeof ErrorBodySchema>;

/** `details` of `400 invalid_tools`: what is wrong in the allowlist that was refused. */
export interface InvalidToolsDetails {
  unknown: string[];
  duplicates: string[];
  empty: number;
  /**
   * Names in both `allowedTools` and `askTools` of one policy
   * (docs/api.md#approvals-and-temporary-grants); absent where there is no `askTools`.
   */
  conflicts?: string[];
}
