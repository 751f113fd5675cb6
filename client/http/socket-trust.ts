/**
 * Clients trust only their own socket (docs/api.md#security): before every new connection to
 * `socketPath` (the first request, and each reconnection), the socket and its folder must belong to
 * this process's user and the folder must not be writable by group or others. Otherwise nothing is
 * connected, so no byte (no token) reaches whatever listens there, and each decision is denied
 * (`pdp_unavailable`); one log line names the path and the fix.
 *
 * The check runs synchronously inside undici's `connect`, right before the socket is opened, on
 * the folder's real path (links resolved) which is then the path connected to: nothing can be
 * swapped between the check and the connection in a folder only this user can write.
 */
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { buildConnector } from 'undici';

/** The `code` of a connection refused before it was opened; its message is the cause a denial quotes. */
export const SOCKET_REFUSED = 'IDEA_SOCKET_REFUSED';

/** A connection to the socket that was not opened: `message` is a short cause (one line). */
export class SocketRefused extends Error {
  override readonly name = 'SocketRefused';
  readonly code = SOCKET_REFUSED;
}

/** Where the trust problems are written: a pino-compatible logger. */
export interface PdpClientLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The `type` of the process warning a client emits when it was given no `logger`. */
export const CLIENT_WARNING_TYPE = 'IdeaPdpClientWarning';

const processWarnings: PdpClientLogger = {
  warn(fields, message) {
    process.emitWarning(`${message} ${JSON.stringify(fields)}`, { type: CLIENT_WARNING_TYPE });
  },
};

/** Why the socket cannot be trusted, and what the user should do about it. */
export interface SocketDistrust {
  cause: string;
  fix: string;
}

/** The path to connect to (the folder's links resolved), or why not to connect at all. */
export type SocketVerdict =
  { ok: true; connectPath: string } | { ok: false; missing: true; cause: string } | ({ ok: false; missing: false } & SocketDistrust);

const octal = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

/**
 * Checks `socketPath` for the user `uid` (undefined where there are no uids: nothing to check).
 * A missing folder or socket is not connected to either: the service is not running, and a path
 * that does not exist yet is one another user might create between a check and a connection.
 */
export function checkSocket(socketPath: string, uid: number | undefined = process.getuid?.()): SocketVerdict {
  if (uid === undefined) return { ok: true, connectPath: socketPath };
  const absolute = path.resolve(socketPath);
  const given = path.dirname(absolute);
  const distrust = (cause: string, fix: string): SocketVerdict => ({
    ok: false,
    missing: false,
    cause: `socket ${socketPath} not trusted: ${cause}`,
    fix,
  });
  let folder: string;
  let folderInfo: Stats;
  try {
    folder = realpathSync(given);
    folderInfo = statSync(folder);
  } catch (error) {
    return { ok: false, missing: true, cause: `no socket at ${socketPath} (its folder: ${codeOf(error)})` };
  }
  const named = folder === given ? `its folder ${folder}` : `its folder ${given} (${folder})`;
  if (!folderInfo.isDirectory()) return distrust(`${named} is not a folder`, "Point socketPath at the service's socket (its PDP_SOCKET).");
  if (folderInfo.uid !== uid) {
    return distrust(
      `${named} belongs to uid ${String(folderInfo.uid)}, not to this user (uid ${String(uid)})`,
      'Use the socket of a service run by this user, in a folder of its own (its PDP_STATE_DIR, mode 0700).',
    );
  }
  if ((folderInfo.mode & 0o022) !== 0) {
    return distrust(`${named} is writable by group or others (mode ${octal(folderInfo.mode)})`, `Run: chmod 700 ${folder}`);
  }
  const connectPath = path.join(folder, path.basename(absolute));
  let info: Stats;
  try {
    info = lstatSync(connectPath);
  } catch (error) {
    return { ok: false, missing: true, cause: `no socket at ${socketPath} (${codeOf(error)}: is the service running?)` };
  }
  if (info.isSymbolicLink()) return distrust('it is a symbolic link', 'Point socketPath at the socket itself, not at a link to it.');
  if (!info.isSocket()) return distrust('it is not a socket', "Point socketPath at the service's socket (its PDP_SOCKET).");
  if (info.uid !== uid) {
    return distrust(
      `it belongs to uid ${String(info.uid)}, not to this user (uid ${String(uid)})`,
      'Use the socket of a service run by this user.',
    );
  }
  return { ok: true, connectPath };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

/**
 * The undici `connect` function of every pool and client of one `PdpClient` on `socketPath`:
 * each new connection is checked first. A problem is logged once (again only after it was
 * fixed in between, or changed), never once per call.
 */
export function trustedSocketConnector(socketPath: string, logger: PdpClientLogger | undefined): buildConnector.connector {
  const log = logger ?? processWarnings;
  let reported: string | undefined;
  let base: { path: string; connect: buildConnector.connector } | undefined;
  return (options, callback) => {
    const verdict = checkSocket(socketPath);
    if (!verdict.ok) {
      if (!verdict.missing && reported !== verdict.cause) {
        reported = verdict.cause;
        try {
          log.warn(
            { socketPath, cause: verdict.cause, fix: verdict.fix },
            `${verdict.cause}. ${verdict.fix} Until then every decision is denied (pdp_unavailable) and nothing is sent to it.`,
          );
        } catch {
          // A host's logger that throws changes nothing: the connection is refused all the same.
        }
      }
      // Later, as a real connection fails: undici does not expect its callback before connect returns.
      process.nextTick(callback, new SocketRefused(verdict.cause), null);
      return;
    }
    reported = undefined;
    if (base?.path !== verdict.connectPath)
      base = { path: verdict.connectPath, connect: buildConnector({ socketPath: verdict.connectPath }) };
    base.connect(options, callback);
  };
}
