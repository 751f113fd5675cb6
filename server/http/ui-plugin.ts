/**
 * Serves the permissions panel (the built assets of `ui/`, see `npm run build:ui`) under `/ui`
 * and `/ui/`. The page only talks to the public REST API; it has no private route.
 *
 * When the assets are not built the routes answer `503 ui_not_built` (checked per request, so a
 * build made while the service runs is picked up without a restart).
 */
import fastifyStatic from '@fastify/static';
// Type-only: brings the `schema.hide` option (the UI routes stay out of the OpenAPI document).
import type {} from '@fastify/swagger';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface UiPluginOptions {
  /** Folder of the built assets; defaults to `dist/ui/` of this checkout (or of the built package). */
  root?: string;
}

/** `dist/ui/` next to `server/` when run from sources (tsx), or next to `dist/server/` when built. */
function defaultUiRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url)); // server/http or dist/server/http
  const parent = path.resolve(here, '..', '..');
  return path.basename(parent) === 'dist' ? path.join(parent, 'ui') : path.join(parent, 'dist', 'ui');
}

// The page loads only its own script and stylesheet and calls the same origin.
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

/**
 * Fastify plugin serving the permissions panel; register it once on the app (not wrapped in
 * fastify-plugin on purpose: its hooks stay scoped to `/ui`).
 */
export const uiPlugin: FastifyPluginAsync<UiPluginOptions> = async (app, options) => {
  const root = options.root ?? defaultUiRoot();
  const indexFile = path.join(root, 'index.html');

  // `serve: false`: no automatic routes, only `reply.sendFile` confined to `root`.
  await app.register(fastifyStatic, { root, serve: false, cacheControl: false, index: false, dotfiles: 'deny' });

  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    return payload;
  });

  const built = async (): Promise<boolean> => {
    try {
      await access(indexFile);
      return true;
    } catch {
      return false;
    }
  };

  const notBuilt = (reply: FastifyReply): FastifyReply =>
    reply.code(503).send({
      error: {
        code: 'ui_not_built',
        message: 'The permissions UI assets are not built: run `npm run build:ui` (output in dist/ui/).',
        details: { root },
      },
    });

  const sendIndex = async (_request: unknown, reply: FastifyReply): Promise<FastifyReply> =>
    (await built()) ? reply.type('text/html; charset=utf-8').sendFile('index.html') : notBuilt(reply);

  const routeOptions = { schema: { hide: true } };
  app.get('/ui', routeOptions, sendIndex);
  app.get('/ui/', routeOptions, sendIndex);
  app.get<{ Params: { '*': string } }>('/ui/*', routeOptions, async (request, reply) => {
    if (!(await built())) return notBuilt(reply);
    const file = request.params['*'];
    return file === '' || file === 'index.html' ? sendIndex(request, reply) : reply.sendFile(file);
  });
};
