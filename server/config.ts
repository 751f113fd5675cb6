/**
 * Reads the service configuration from the environment (SPEC §3, §7). Pure apart from reading
 * `*_FILE` secrets and the generated admin token file.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ID_REGEX } from '../schemas/ids.js';

export interface ServiceConfig {
  host: string;
  port: number;
  projectsRoot: string | undefined;
  projects: Record<string, string>;
  adminToken: string;
  /** Where the admin token was generated, when it was not given. */
  generatedTokenFile: string | undefined;
  decideToken: string | undefined;
  stateDir: string;
  auditFile: string | undefined;
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

async function secret(env: NodeJS.ProcessEnv, name: string): Promise<string | undefined> {
  const direct = env[name];
  if (direct !== undefined && direct !== '') return direct;
  const file = env[`${name}_FILE`];
  if (file === undefined || file === '') return undefined;
  const value = (await fs.readFile(file, 'utf8')).trim();
  return value === '' ? undefined : value;
}

/** The bundled demo projects, next to the sources or to the build output. */
export function demoProjectsRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const top = path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '..', '..') : path.resolve(here, '..');
  return path.join(top, 'examples', 'projects');
}

export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<ServiceConfig> {
  const host = env['PDP_HOST'] || '127.0.0.1';
  const port = Number(env['PDP_PORT'] || 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`PDP_PORT: invalid port ${env['PDP_PORT']}`);
  const projects = env['PDP_PROJECTS'] ? parseProjectsList(env['PDP_PROJECTS']) : {};
  let projectsRoot = env['PDP_PROJECTS_ROOT'] || undefined;
  if (projectsRoot === undefined && Object.keys(projects).length === 0) projectsRoot = demoProjectsRoot();
  const decideToken = await secret(env, 'PDP_DECIDE_TOKEN');
  if (!isLoopback(host) && decideToken === undefined) {
    throw new ConfigError(
      `Refusing to listen on ${host} without PDP_DECIDE_TOKEN: decisions and policies would be readable by anyone on the network.`,
    );
  }
  const stateDir = path.resolve(env['PDP_STATE_DIR'] || '.pdp');
  let adminToken = await secret(env, 'PDP_ADMIN_TOKEN');
  let generatedTokenFile: string | undefined;
  if (adminToken === undefined) {
    generatedTokenFile = path.join(stateDir, 'admin-token');
    adminToken = await generateAdminToken(generatedTokenFile);
  }
  if (decideToken !== undefined && decideToken === adminToken) {
    throw new ConfigError('PDP_DECIDE_TOKEN must differ from PDP_ADMIN_TOKEN: whoever can decide could otherwise write policies.');
  }
  return {
    host,
    port,
    projectsRoot,
    projects,
    adminToken,
    generatedTokenFile,
    decideToken,
    stateDir,
    auditFile: env['PDP_AUDIT_FILE'] || undefined,
  };
}

/** A fresh token at every start, written with mode 0600 (the folder 0700) before the service answers. */
async function generateAdminToken(file: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temp, `${token}\n`, { mode: 0o600 });
  await fs.chmod(temp, 0o600);
  await fs.rename(temp, file);
  return token;
}
