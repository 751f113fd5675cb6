/**
 * Docker does not run on the build machine: these tests read the Dockerfile, .dockerignore and
 * docker-compose.yml as data and check the properties the deployment relies on, and run the
 * health-check commands themselves against a real HTTP server.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..', '..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string>; engines: { node: string } };

interface Instruction {
  keyword: string;
  args: string;
  stage: number;
}

/** The Dockerfile's instructions (continuations joined, comments dropped), with their stage index. */
function dockerfileInstructions(): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of read('Dockerfile').split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push((current + line).trim());
    current = '';
  }
  let stage = -1;
  return logical.map((line) => {
    const [keyword = '', ...rest] = line.split(/\s+/);
    if (keyword.toUpperCase() === 'FROM') stage++;
    return { keyword: keyword.toUpperCase(), args: rest.join(' '), stage };
  });
}

interface ComposeService {
  build?: unknown;
  user?: string;
  read_only?: boolean;
  cap_drop?: string[];
  security_opt?: string[];
  restart?: string;
  tmpfs?: string[] | string;
  ports?: unknown[];
  environment?: Record<string, string>;
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[];
  healthcheck?: { test: string[] };
}
const compose = parse(read('docker-compose.yml')) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const pdp = compose.services.pdp ?? {};

describe('Dockerfile', () => {
  const instructions = dockerfileInstructions();
  const lastStage = Math.max(...instructions.map((instruction) => instruction.stage));
  const runtime = instructions.filter((instruction) => instruction.stage === lastStage);
  const runs = instructions.filter((instruction) => instruction.keyword === 'RUN').map((run) => run.args);

  it('is multi-stage on Node 24, the active LTS line, which the engines field names', () => {
    const froms = instructions.filter((instruction) => instruction.keyword === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(read('Dockerfile')).toMatch(/^ARG NODE_IMAGE=node:24[.\d]*-(bookworm-slim|trixie-slim|alpine)$/m);
    expect(packageJson.engines.node).toContain('^24.');
  });

  it('installs and builds with exactly the commands the project uses', () => {
    const npmCommands = runs.flatMap((run) => run.split('&&').map((part) => part.trim())).filter((c) => c.startsWith('npm '));
    expect(npmCommands).toEqual(['npm ci', 'npm run build', 'npm ci --omit=dev', 'npm cache clean --force']);
    expect(packageJson.scripts.build).toBeTypeOf('string');
    // The build stage installs dev dependencies (tsc, esbuild) before building.
    const buildStage = instructions.filter((instruction) => instruction.stage === 0).map((i) => `${i.keyword} ${i.args}`);
    expect(buildStage.indexOf('RUN npm ci')).toBeLessThan(buildStage.indexOf('RUN npm run build'));
    expect(buildStage.indexOf('RUN npm ci')).toBeGreaterThan(-1);
  });

  it('builds the UI as part of `npm run build` when the project has one', () => {
    if (packageJson.scripts['build:ui'] === undefined) return;
    expect(packageJson.scripts.build).toContain('build:ui');
  });

  it('starts dist/server/main.js, which the build config produces from server/main.ts', () => {
    const cmd = runtime.find((instruction) => instruction.keyword === 'CMD');
    expect(JSON.parse(cmd?.args ?? 'null')).toEqual(['node', 'dist/server/main.js']);
    expect(packageJson.scripts['start:dist']).toBe('node dist/server/main.js');

    const configPath = join(ROOT, 'tsconfig.build.json');
    const parsed = ts.getParsedCommandLineOfConfigFile(
      configPath,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
        },
      },
    );
    expect(parsed).toBeDefined();
    const mainSource = join(ROOT, 'server', 'main.ts');
    expect(existsSync(mainSource)).toBe(true);
    expect(parsed?.fileNames.map((file) => resolve(file))).toContain(mainSource);
    const outputs = ts.getOutputFileNames(parsed as ts.ParsedCommandLine, mainSource, false);
    expect(outputs.map((file) => resolve(file))).toContain(join(ROOT, 'dist', 'server', 'main.js'));
  });

  it('runs as the unprivileged node user with the container defaults', () => {
    const users = runtime.filter((instruction) => instruction.keyword === 'USER').map((i) => i.args);
    expect(users).toEqual(['node']);
    const env = runtime
      .filter((instruction) => instruction.keyword === 'ENV')
      .map((instruction) => instruction.args)
      .join(' ');
    expect(env).toMatch(/\bPDP_HOST=0\.0\.0\.0\b/);
    expect(env).toMatch(/\bPDP_STATE_DIR=\/var\/lib\/pdp\b/);
    expect(env).toMatch(/\bNODE_ENV=production\b/);
    const copies = runtime.filter((instruction) => instruction.keyword === 'COPY').map((i) => i.args);
    expect(copies).toContain('--from=build /app/dist ./dist');
    expect(copies.some((copy) => copy.endsWith('examples/projects ./examples/projects'))).toBe(true);
    // The sources and dev dependencies stay in the build stage.
    expect(copies.some((copy) => copy.startsWith('. ') || copy === '. .')).toBe(false);
  });

  it('has a HEALTHCHECK on /healthz that needs no curl', () => {
    const healthcheck = runtime.find((instruction) => instruction.keyword === 'HEALTHCHECK');
    expect(healthcheck?.args).toContain('/healthz');
    expect(healthcheck?.args).toMatch(/CMD \["node", "-e"/);
    expect(healthcheck?.args).not.toMatch(/curl|wget/);
  });
});

describe('.dockerignore', () => {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('keeps dependencies, build output, git data and secrets out of the context', () => {
    for (const excluded of ['node_modules', 'dist', '.git', '.pdp', '.env', '**/admin-token']) {
      expect(patterns).toContain(excluded);
    }
  });

  it('keeps everything `npm ci` and `npm run build` read', () => {
    const buildConfig = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    const needed = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'ui', ...buildConfig.include];
    for (const path of needed) {
      expect(
        patterns.some((pattern) => pattern === path || path.startsWith(`${pattern}/`)),
        path,
      ).toBe(false);
    }
  });
});

describe('docker-compose.yml', () => {
  it('builds the Dockerfile of the checkout and restarts unless stopped', () => {
    expect(pdp.build).toBe('.');
    expect(pdp.restart).toBe('unless-stopped');
  });

  it('publishes the port on loopback only', () => {
    expect(pdp.ports).toEqual(['127.0.0.1:8787:8787']);
  });

  it('is locked down: read-only root, no capabilities, no privilege gain, not root', () => {
    expect(pdp.read_only).toBe(true);
    expect(pdp.cap_drop).toEqual(['ALL']);
    expect(pdp.security_opt).toContain('no-new-privileges:true');
    expect(pdp.user).toBeDefined();
    const user = String(pdp.user).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
    expect(user.split(':')[0]).not.toMatch(/^(0|root)$/);
    const tmpfs = ([] as string[]).concat(pdp.tmpfs ?? []);
    expect(tmpfs.some((mount) => mount.split(':')[0] === '/tmp')).toBe(true);
  });

  it('mounts the projects root writable and keeps the state in a named volume', () => {
    const environment = pdp.environment ?? {};
    expect(environment.PDP_HOST).toBe('0.0.0.0');
    const projects = pdp.volumes?.find((volume) => volume.target === environment.PDP_PROJECTS_ROOT);
    expect(projects).toMatchObject({ type: 'bind', source: '${PDP_PROJECTS_HOST_DIR:-./examples/projects}' });
    expect(projects?.read_only).not.toBe(true);
    const state = pdp.volumes?.find((volume) => volume.target === environment.PDP_STATE_DIR);
    expect(state?.type).toBe('volume');
    expect(Object.keys(compose.volumes ?? {})).toContain(state?.source);
  });

  it('takes both tokens from the environment, required, never a literal', () => {
    const environment = pdp.environment ?? {};
    expect(environment.PDP_ADMIN_TOKEN).toMatch(/^\$\{PDP_ADMIN_TOKEN:\?[^}]+\}$/);
    expect(environment.PDP_DECIDE_TOKEN).toMatch(/^\$\{PDP_DECIDE_TOKEN:\?[^}]+\}$/);
  });

  it('uses only environment variables that the README documents', () => {
    const docs = read('README.md');
    for (const name of Object.keys(pdp.environment ?? {})) expect(docs, name).toContain(`\`${name}\``);
    for (const name of ['PDP_ADMIN_TOKEN_FILE', 'PDP_DECIDE_TOKEN_FILE']) expect(docs).toContain(`\`${name}\``);
  });

  it('checks readiness on /readyz with node', () => {
    const test = pdp.healthcheck?.test ?? [];
    expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(test[3]).toContain('/readyz');
  });
});

describe('health-check commands', () => {
  let server: Server;
  let port = 0;
  let status = 200;
  const execFileAsync = promisify(execFile);

  beforeAll(async () => {
    server = createServer((request, response) => {
      response.statusCode = request.url === '/healthz' || request.url === '/readyz' ? status : 404;
      response.end('{}');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  /** Runs `node -e <script>` and resolves with its exit code. */
  async function exitCode(script: string, env: Record<string, string> = {}): Promise<number> {
    try {
      await execFileAsync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, timeout: 10_000 });
      return 0;
    } catch (error) {
      return (error as { code?: number }).code ?? -1;
    }
  }

  it('the Dockerfile HEALTHCHECK passes on 200 and fails on 503 or no server', async () => {
    const args = dockerfileInstructions().find((instruction) => instruction.keyword === 'HEALTHCHECK')?.args ?? '';
    const command = JSON.parse(args.slice(args.indexOf('CMD ') + 4)) as string[];
    const script = command[2] ?? '';
    status = 200;
    expect(await exitCode(script, { PDP_PORT: String(port) })).toBe(0);
    status = 503;
    expect(await exitCode(script, { PDP_PORT: String(port) })).toBe(1);
    server.closeAllConnections();
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const unusedPort = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    expect(await exitCode(script, { PDP_PORT: String(unusedPort) })).toBe(1);
  });

  it('the compose healthcheck passes when ready and fails while loading', async () => {
    const script = (pdp.healthcheck?.test[3] ?? '').replace('127.0.0.1:8787', `127.0.0.1:${port}`);
    expect(script).toContain(String(port));
    status = 200;
    expect(await exitCode(script)).toBe(0);
    status = 503;
    expect(await exitCode(script)).toBe(1);
  });
});
