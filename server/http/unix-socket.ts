/**
 * The service's unix domain socket (docs/api.md#security): the same Fastify app as on TCP, on a socket of
 * mode 0600 in a folder only the service's user may write, so that no other local process can
 * answer in its place while it is down (a TCP port can be taken by anyone).
 */
import { promises as fs } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ConfigError } from '../config.js';

/** The settings of the TCP server the socket's server copies, so that both hold connections alike. */
export interface ServerLimits {
  readonly maxConnections: number;
  readonly keepAliveTimeout: number;
  readonly headersTimeout: number;
  readonly requestTimeout: number;
}

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

/**
 * Listens on `socketPath` with `handler` (the app's own, from Fastify's serverFactory), once the
 * path is safe: its folder is the service user's and nobody else may write to it, and what is there
 * is nothing or a stale socket of this user (removed). Anything else, or a live socket (another
 * service), is a {@link ConfigError}.
 */
export async function listenOnSocket(socketPath: string, handler: Handler, limits: ServerLimits): Promise<http.Server> {
  await checkSocketFolder(socketPath);
  await clearStaleSocket(socketPath);
  const server = http.createServer(handler);
  server.maxConnections = limits.maxConnections;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  server.headersTimeout = limits.headersTimeout;
  server.requestTimeout = limits.requestTimeout;
  // The socket is made by bind() inside listen(): with this umask it is 0600 from its first instant.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
  await fs.chmod(socketPath, 0o600);
  return server;
}

/** Serves `app` on `socketPath` too, with the TCP server's own request handler and limits. */
export function serveAppOnSocket(app: { readonly server: http.Server }, socketPath: string): Promise<http.Server> {
  const tcp = app.server;
  return listenOnSocket(
    socketPath,
    (request, response) => {
      tcp.emit('request', request, response);
    },
    {
      maxConnections: tcp.maxConnections,
      keepAliveTimeout: tcp.keepAliveTimeout,
      headersTimeout: tcp.headersTimeout,
      requestTimeout: tcp.requestTimeout,
    },
  );
}

/** Closes the server (Node removes the socket file) once its connections are done. */
export function closeSocketServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve();
    });
    server.closeIdleConnections();
  });
}

const refuse = (socketPath: string, why: string, fix: string): ConfigError =>
  new ConfigError(`PDP_SOCKET ${socketPath} ${why}: refusing to start. ${fix}`);

async function checkSocketFolder(socketPath: string): Promise<void> {
  const folder = path.dirname(socketPath);
  const info = await fs.lstat(folder).catch(() => undefined);
  if (info === undefined) throw refuse(socketPath, `is in a folder that does not exist (${folder})`, 'Create it with mode 0700.');
  if (info.isSymbolicLink() || !info.isDirectory())
    throw refuse(socketPath, `is not in a real folder (${folder})`, 'Point PDP_SOCKET into a folder.');
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid !== undefined && info.uid !== uid) {
    throw refuse(
      socketPath,
      `is in a folder of uid ${info.uid}, not of the service (uid ${uid})`,
      "Use a folder of the service's user, such as PDP_STATE_DIR.",
    );
  }
  if ((info.mode & 0o022) !== 0) {
    throw refuse(socketPath, `is in a folder that group or others may write (${folder})`, `Run: chmod 700 ${folder}`);
  }
}

/** Removes a socket of this user that nobody listens on; refuses anything else at the path. */
async function clearStaleSocket(socketPath: string): Promise<void> {
  const info = await fs.lstat(socketPath).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (info === undefined) return;
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (!info.isSocket() || (uid !== undefined && info.uid !== uid)) {
    throw refuse(
      socketPath,
      'exists and is not a socket of this service',
      'Remove it, or point PDP_SOCKET elsewhere (off disables the socket).',
    );
  }
  if (await answers(socketPath)) {
    throw refuse(socketPath, 'is in use by another process (another service?)', 'Stop it, or point PDP_SOCKET elsewhere.');
  }
  await fs.unlink(socketPath);
}

/** True when something accepts connections on the socket. */
function answers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => {
      resolve(false);
    });
  });
}
