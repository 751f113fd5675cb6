/**
 * `buildApp()` builds the service as a Fastify instance without listening (as in fastify/demo):
 * the services (server/services.ts), then the app over them as one plugin (service-plugin.ts).
 * server/main.ts reads the environment and listens. `await app.ready()` resolves once every
 * project is loaded and watched; `await app.close()` stops the watcher.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { createLogger } from '../ops/logger.js';
import { DEFAULT_MAX_CONNECTIONS, buildServices, type ServicesOptions } from '../services.js';
import { errorBody } from './error-handler.js';
import { servicePlugin } from './service-plugin.js';

export interface BuildAppOptions extends ServicesOptions {
  /** Required on every mutating route (`Authorization: Bearer <token>`). */
  adminToken: string;
  /** When set, `/decide` and the GET routes (but health, `/ui`, `/docs`) need it or the admin token. */
  decideToken?: string | undefined;
  /** PDP_APPROVER_TOKEN: may answer approval requests (`once`, `for` up to 8 h, `deny`) and nothing else. */
  approverToken?: string | undefined;
  /** `false` (default) for silence, `true` or pino options for JSON logs, or a pino logger. */
  logger?: boolean | LoggerOptions | Logger | undefined;
  /** Largest accepted request body in bytes (default 1 MiB; the decision routes take 64 KiB). */
  bodyLimit?: number | undefined;
  /**
   * Answer only requests whose `Host` names the loopback interface (`main.ts` sets it when bound to
   * loopback): a web page that rebinds its DNS name to 127.0.0.1 then cannot read or decide.
   */
  loopbackHostsOnly?: boolean | undefined;
  /** An idle keep-alive connection is closed after this many ms (default 10 s). */
  keepAliveTimeoutMs?: number | undefined;
  /** A connection that has not sent a request's headers within this many ms is closed (default 5 s). */
  headersTimeoutMs?: number | undefined;
}

function makeLogger(option: BuildAppOptions['logger']): Logger {
  if (option === undefined || option === false) return pino({ level: 'silent' });
  if (option === true) return createLogger();
  if (typeof (option as Logger).child === 'function') return option as Logger;
  return createLogger(option as LoggerOptions);
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const logger = makeLogger(options.logger);
  // Seconds, not a minute: 1,024 sockets that never finish a request would otherwise hold every place for 20 s.
  const headersTimeout = options.headersTimeoutMs ?? 5_000;
  const app = Fastify({
    // The service logs its own lines (decisions, writes, reloads, unexpected errors) through `logger`;
    // Fastify's request logs would carry the request's headers, tokens included.
    logger: false,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A path parameter (an agent id or a requester) may be 1,024 characters (schemas/api.ts); the
    // router's default of 100 would refuse longer ids before validation could name the problem.
    routerOptions: { maxParamLength: 1024 },
    // A request still incomplete after 10 s is cut (a 1 MiB body takes milliseconds on loopback), so
    // held-open connections cannot pin the sockets.
    requestTimeout: Math.max(headersTimeout, 10_000),
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
    // Checked every second: a timeout is then at most a second late.
    http: { headersTimeout, connectionsCheckingInterval: Math.min(headersTimeout, 1_000) },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A bad percent-encoding (`%C0%AE`) or an over-long parameter is refused by the router before
    // any hook or error handler runs: keep the one error shape there too.
    frameworkErrors: (error, _request, reply) => {
      // Typed for the routes' schemas, which this error precedes.
      const plain = reply as unknown as FastifyReply;
      void plain.code(error.statusCode ?? 400).send(errorBody('invalid_request', `Invalid request: ${error.message}`));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  const services = buildServices(options, logger);
  const { adminToken, decideToken, approverToken, loopbackHostsOnly } = options;
  await app.register(servicePlugin, { services, logger, auth: { adminToken, decideToken, approverToken, loopbackHostsOnly } });
  return app;
}
