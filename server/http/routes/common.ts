/** Shared route bits: the typed app, error responses for the OpenAPI document, ETag/If-Match helpers. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { ErrorBodySchema } from '../../../schemas/index.js';

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * `onRequest` hook of the DELETE routes. They take no body, and some HTTP helpers still send
 * `content-type: application/json` with an empty one, which Fastify refuses ("Body cannot be empty
 * when content-type is set"): an empty body is read as no body. A body with bytes in it is still
 * parsed as before (bad JSON is still a 400).
 */
export function emptyBodyIsNoBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const headers = request.raw.headers;
  if (headers['content-type'] !== undefined && headers['transfer-encoding'] === undefined && (headers['content-length'] ?? '0') === '0') {
    delete headers['content-type'];
  }
  done();
}

/** Error responses, documented once per status. */
export const errors = (...statuses: number[]): Record<number, typeof ErrorBodySchema> =>
  Object.fromEntries(statuses.map((status) => [status, ErrorBodySchema]));

/**
 * The revisions a client sent in `If-Match` (RFC 9110: `*` or a list of entity tags; quotes and a
 * weak `W/` prefix stripped), or undefined without the header.
 */
export function ifMatchOf(request: FastifyRequest): string[] | undefined {
  const header = request.headers['if-match'];
  if (typeof header !== 'string' || header.trim() === '') return undefined;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .filter((tag) => tag !== '')
    .map((tag) => (tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"') ? tag.slice(1, -1) : tag));
}

export function setEtag(reply: FastifyReply, revision: string): void {
  reply.header('etag', `"${revision}"`);
}
