/**
 * Reads the service configuration from the environment (docs/api.md#projects-and-files, docs/api.md#security). Pure apart from
 * reading `*_FILE` secrets, and preparing the state folder and its admin token file.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ID_REGEX } from '../schemas/ids.js';
import { MIN_TOKEN_FILE_CHARACTERS, readTokenFileSync, TokenFileProblem } from '../schemas/token-file.js';

export interface ServiceConfig {
  host: string;
  port: number;
  projectsRoot: string | undefined;
  projects: Record<string, string>;
  adminToken: string;
  /** The file the admin token was read from or generated in, when the environment gave none. */
  generatedTokenFile: string | undefined;
  /** True when that file already held the token (a restart), false when it was generated now. */
  adminTokenReused: boolean;
  decideToken: string | undefined;
  /** PDP_APPROVER_TOKEN(_FILE): answers approval requests (once, for up to 8 h, deny), nothing else. */
  approverToken: string | undefined;
  /** PDP_APPROVER_PROJECTS: the projects the approver token may answer in; undefined: every project. */
  approverProjects: readonly string[] | undefined;
  stateDir: string;
  /** PDP_SOCKET: the unix socket to serve on too, or undefined (off, or a default path too long). */
  socketPath: string | undefined;
  /** Why the default socket is not served (its path is too long), for the log. */
  socketWarning: string | undefined;
  auditFile: string | undefined;
  /** PDP_APPROVAL_TTL_SECONDS: how long an approval request stays pending (undefined: the default, 300 s). */
  approvalTtlSeconds: number | undefined;
  /** PDP_MAX_CONNECTIONS, PDP_MAX_EVENT_STREAMS(_PER_CLIENT): undefined for the app's defaults. */
  maxConnections: number | undefined;
  maxEventStreams: number | undefined;
  maxEventStreamsPerClient: number | undefined;
}

/** Whether PDP_PROJECTS_ROOT or PDP_PROJECTS names projects (`idea-pdp serve` serves demo copies otherwise). */
export function projectsConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.PDP_PROJECTS_ROOT) || Boolean(env.PDP_PROJECTS);
}

/** Whether PDP_STATE_DIR was given by hand (the default folder is outside any repository). */
export function stateDirGiven(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.PDP_STATE_DIR);
}

/** What a reader (`idea-pdp preview --server`) was given for the decide token: PDP_DECIDE_TOKEN_FILE wins. */
export function readerTokenSettingOf(env: NodeJS.ProcessEnv = process.env): { file: string } | { token: string } | undefined {
  if (env.PDP_DECIDE_TOKEN_FILE) return { file: env.PDP_DECIDE_TOKEN_FILE };
  return env.PDP_DECIDE_TOKEN ? { token: env.PDP_DECIDE_TOKEN } : undefined;
}

/** PDP_LOG_LEVEL: the pino level of the service's logs (default info). */
export function logLevelOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.PDP_LOG_LEVEL || 'info';
}

/** PDP_MAX_CONNECTIONS and the stream limits: a positive integer, or undefined for the app's default. */
function positiveIntegerOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new ConfigError(`${name}: not a positive integer: ${value}`);
  return parsed;
}

/** The longest PDP_APPROVAL_TTL_SECONDS accepted: a day, like a temporary grant. */
const MAX_APPROVAL_TTL_SECONDS = 86_400;

/** PDP_APPROVAL_TTL_SECONDS: an integer from 1 to a day, or undefined for the default. */
function approvalTtlOf(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > MAX_APPROVAL_TTL_SECONDS) {
    throw new ConfigError(`PDP_APPROVAL_TTL_SECONDS: not an integer from 1 to ${MAX_APPROVAL_TTL_SECONDS}: ${value}`);
  }
  return parsed;
}

/** PDP_APPROVER_PROJECTS: a comma list of project ids, or undefined (unset or empty) for every project. */
function approverProjectsOf(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const ids = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const bad = ids.find((id) => !PROJECT_ID_REGEX.test(id));
  if (bad !== undefined) throw new ConfigError(`PDP_APPROVER_PROJECTS: invalid project id ${JSON.stringify(bad)}`);
  return [...new Set(ids)];
}

/** Linux's `sun_path` holds 107 bytes and a NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * PDP_SOCKET: `off`, a path, or (unset or empty) `<stateDir>/pdp.sock`. A path longer than a unix
 * socket's is a start-up error when given, and no socket and a warning when it is the default.
 */
function socketOf(value: string | undefined, stateDir: string): { path: string | undefined; warning: string | undefined } {
  if (value === 'off') return { path: undefined, warning: undefined };
  const given = value !== undefined && value !== '';
  const socketPath = given ? path.resolve(value) : path.join(stateDir, 'pdp.sock');
  const bytes = Buffer.byteLength(socketPath);
  if (bytes <= MAX_SOCKET_PATH_BYTES) return { path: socketPath, warning: undefined };
  const why = `${socketPath} is ${bytes} bytes long, more than a unix socket's ${MAX_SOCKET_PATH_BYTES}`;
  if (given) throw new ConfigError(`PDP_SOCKET: ${why}. Choose a shorter path, or PDP_SOCKET=off.`);
  return { path: undefined, warning: `No unix socket: ${why}. Set PDP_SOCKET to a shorter path in a 0700 folder.` };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** `id=/abs/path,id2=/abs/path2` → map; ids and paths are checked. */
export function parseProjectsList(value: string): Record<string, string> {
  const projects: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const entry of value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const equals = entry.indexOf('=');
    const id = entry.slice(0, equals).trim();
    const root = entry.slice(equals + 1).trim();
    if (equals <= 0 || !PROJECT_ID_REGEX.test(id)) throw new ConfigError(`PDP_PROJECTS: invalid project id in ${JSON.stringify(entry)}`);
    if (!path.isAbsolute(root)) throw new ConfigError(`PDP_PROJECTS: the path of ${id} must be absolute`);
    if (id in projects) throw new ConfigError(`PDP_PROJECTS: project ${id} is listed twice`);
    // Two ids for one folder would be two write queues on one policy file (lost updates).
    const same = Object.keys(projects).find((other) => path.resolve(projects[other] ?? '') === path.resolve(root));
    if (same !== undefined) throw new ConfigError(`PDP_PROJECTS: projects ${same} and ${id} name the same folder ${root}`);
    projects[id] = root;
  }
  return projects;
}

function secret(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const direct = env[name];
  if (direct !== undefined && direct !== '') return direct;
  const file = env[`${name}_FILE`];
  if (file === undefined || file === '') return undefined;
  return readTokenFile(`${name}_FILE`, file);
}

/**
 * The token in a `*_TOKEN_FILE`, refused like sshd's StrictModes (docs/api.md#security) when the file is a
 * symbolic link, not a regular file, owned by another user than the service's or root, readable or
 * writable by group or others, or holds fewer than 16 characters: each refusal names the file and the fix.
 */
function readTokenFile(variable: string, file: string): string {
  try {
    return readTokenFileSync(file, {
      setting: variable,
      owner: "the service's",
      rootMayOwn: true,
      minCharacters: MIN_TOKEN_FILE_CHARACTERS,
    });
  } catch (error) {
    if (error instanceof TokenFileProblem) throw new ConfigError(`${variable} ${file} ${error.why}: refusing to start. ${error.fix}`);
    throw error;
  }
}

/** The bundled demo projects, next to the sources or to the build output. */
export function demoProjectsRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const top = path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '..', '..') : path.resolve(here, '..');
  return path.join(top, 'examples', 'projects');
}

/**
 * PDP_STATE_DIR, or `$XDG_STATE_HOME/idea-pdp`, or `~/.local/state/idea-pdp` (docs/api.md#security):
 * never a folder relative to where the service was started, which is often a repository an agent
 * works in, and the admin token lives there. A relative XDG_STATE_HOME is ignored, as the XDG base
 * directory specification says.
 */
export function stateDirOf(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PDP_STATE_DIR) return path.resolve(env.PDP_STATE_DIR);
  const xdg = env.XDG_STATE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(base, 'idea-pdp');
}

export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<ServiceConfig> {
  const host = env.PDP_HOST || '127.0.0.1';
  const port = Number(env.PDP_PORT || 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PDP_PORT: invalid port ${env.PDP_PORT}`);
  const projects = env.PDP_PROJECTS ? parseProjectsList(env.PDP_PROJECTS) : {};
  let projectsRoot = env.PDP_PROJECTS_ROOT || undefined;
  if (projectsRoot === undefined && Object.keys(projects).length === 0) projectsRoot = demoProjectsRoot();
  const decideToken = secret(env, 'PDP_DECIDE_TOKEN');
  if (!isLoopback(host) && decideToken === undefined) {
    throw new ConfigError(
      `Refusing to listen on ${host} without PDP_DECIDE_TOKEN: decisions and policies would be readable by anyone on the network.`,
    );
  }
  const stateDir = stateDirOf(env);
  const approvalTtlSeconds = approvalTtlOf(env.PDP_APPROVAL_TTL_SECONDS);
  let adminToken = secret(env, 'PDP_ADMIN_TOKEN');
  let generatedTokenFile: string | undefined;
  let adminTokenReused = false;
  if (adminToken === undefined) {
    const kept = await keptAdminToken(stateDir);
    adminToken = kept.token;
    generatedTokenFile = kept.file;
    adminTokenReused = kept.reused;
  }
  if (decideToken !== undefined && decideToken === adminToken) {
    throw new ConfigError('PDP_DECIDE_TOKEN must differ from PDP_ADMIN_TOKEN: whoever can decide could otherwise write policies.');
  }
  const approverToken = secret(env, 'PDP_APPROVER_TOKEN');
  if (approverToken !== undefined && approverToken === adminToken) {
    throw new ConfigError('PDP_APPROVER_TOKEN must differ from PDP_ADMIN_TOKEN: whoever can approve could otherwise write policies.');
  }
  if (approverToken !== undefined && approverToken === decideToken) {
    throw new ConfigError(
      'PDP_APPROVER_TOKEN must differ from PDP_DECIDE_TOKEN: an enforcement point could otherwise approve its own calls.',
    );
  }
  const approverProjects = approverProjectsOf(env.PDP_APPROVER_PROJECTS);
  const socket = socketOf(env.PDP_SOCKET, stateDir);
  return {
    host,
    port,
    projectsRoot,
    projects,
    adminToken,
    generatedTokenFile,
    adminTokenReused,
    decideToken,
    approverToken,
    approverProjects,
    stateDir,
    socketPath: socket.path,
    socketWarning: socket.warning,
    auditFile: env.PDP_AUDIT_FILE || undefined,
    approvalTtlSeconds,
    maxConnections: positiveIntegerOf('PDP_MAX_CONNECTIONS', env.PDP_MAX_CONNECTIONS),
    maxEventStreams: positiveIntegerOf('PDP_MAX_EVENT_STREAMS', env.PDP_MAX_EVENT_STREAMS),
    maxEventStreamsPerClient: positiveIntegerOf('PDP_MAX_EVENT_STREAMS_PER_CLIENT', env.PDP_MAX_EVENT_STREAMS_PER_CLIENT),
  };
}

/** Where the admin token is kept when the environment gives none. */
const ADMIN_TOKEN_FILE = 'admin-token';
/** What a kept admin token may look like: printable ASCII, no space, 16 to 1,024 characters. */
const TOKEN_TEXT = /^[\x21-\x7e]{16,1024}$/;
const NO_FOLLOW = constants.O_NOFOLLOW;
const serviceUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);
const octal = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

/**
 * Makes sure the state folder is the service's own: created 0700 when absent (with its missing
 * parents, 0700 too); refused when it is a symbolic link, not a folder, owned by another user, or
 * writable by group or others (another local user could then swap the files the service trusts,
 * such as the admin token).
 */
export async function prepareStateDir(dir: string): Promise<void> {
  const refuse = (why: string, fix: string) => new ConfigError(`PDP_STATE_DIR ${dir} ${why}: refusing to start. ${fix}`);
  let info: Stats;
  try {
    const created = await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    // mkdir's mode goes through the umask; a folder made now is set to 0700 whatever the umask.
    if (created !== undefined) await fs.chmod(dir, 0o700);
    info = await fs.lstat(dir);
  } catch (error) {
    // A dangling link at the folder's name lands here too: mkdir fails, lstat says what it is.
    const link = await fs.lstat(dir).catch(() => undefined);
    if (link?.isSymbolicLink()) throw refuse('is a symbolic link', 'Point PDP_STATE_DIR at the real folder.');
    throw refuse(`cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)})`, 'Check its parent folder.');
  }
  if (info.isSymbolicLink()) throw refuse('is a symbolic link', 'Point PDP_STATE_DIR at the real folder.');
  if (!info.isDirectory()) throw refuse('is not a folder', 'Point PDP_STATE_DIR at a folder.');
  const uid = serviceUid();
  if (uid !== undefined && info.uid !== uid) throw refuse(`belongs to uid ${info.uid}, not to the service (uid ${uid})`, 'chown it.');
  if ((info.mode & 0o022) !== 0) throw refuse(`is writable by group or others (mode ${octal(info.mode)})`, `Run: chmod 700 ${dir}`);
}

/**
 * The admin token kept in `<stateDir>/admin-token` (docs/api.md#security), so that a restart does not lock
 * an open panel out: reused when the file is safe, generated when it is absent, and a refusal to
 * start when it exists but is not safe.
 */
async function keptAdminToken(stateDir: string): Promise<{ token: string; file: string; reused: boolean }> {
  await prepareStateDir(stateDir);
  const file = path.join(stateDir, ADMIN_TOKEN_FILE);
  const kept = readKeptToken(file);
  if (kept !== undefined) return { token: kept, file, reused: true };
  const token = randomBytes(32).toString('base64url');
  await writeTokenFile(file, token);
  return { token, file, reused: false };
}

/** The token in `file`, undefined when there is no file; throws a ConfigError when the file is not safe. */
function readKeptToken(file: string): string | undefined {
  const refuse = (why: string) =>
    new ConfigError(
      `The admin token file ${file} ${why}: refusing to start. Delete it to have a new token generated, or set PDP_ADMIN_TOKEN.`,
    );
  let token: string;
  try {
    token = readTokenFileSync(file, { setting: 'PDP_STATE_DIR', owner: 'the service', rootMayOwn: false, minCharacters: 0 });
  } catch (error) {
    if (!(error instanceof TokenFileProblem)) throw error;
    if (error.kind === 'missing') return undefined;
    throw refuse(error.why);
  }
  if (!TOKEN_TEXT.test(token)) throw refuse('does not hold a token (16 to 1,024 printable characters, no space)');
  return token;
}

/**
 * Writes the token durably without following links: a temp file of an unguessable name created
 * with O_EXCL | O_NOFOLLOW and mode 0600, fsync, rename over the final name (a link planted there
 * is replaced, never written through), fsync of the folder.
 */
async function writeTokenFile(file: string, token: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o600);
  try {
    await handle.writeFile(`${token}\n`);
    await handle.chmod(0o600);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  const folder = await fs.open(path.dirname(file), constants.O_RDONLY);
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
