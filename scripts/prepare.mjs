/**
 * npm's `prepare`: builds the package when it is installed from a git URL or a folder, and does
 * nothing in the package's own clone. npm runs `prepare` in both cases; `INIT_CWD`, the folder npm was
 * started in, tells them apart: the clone itself for `npm ci`/`npm install`/`npm pack` there (pack
 * builds through `prepack`), the installing project's folder otherwise. A clone's `npm ci` stays as it
 * was; an install from git pays the full build once (2 min wall, 27 s CPU on the 2-core test machine).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const real = (folder) => {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
};
const startedIn = process.env.INIT_CWD;

if (startedIn === undefined || real(startedIn) === real(root)) process.exit(0);

if (!existsSync(path.join(root, 'node_modules', 'typescript')) || !existsSync(path.join(root, 'node_modules', 'esbuild'))) {
  process.stderr.write(
    `idea-mcp-tool-permissions: building ${root} needs its devDependencies: run \`npm ci\` there first, then install it again\n`,
  );
  process.exit(1);
}
// npm_execpath is the npm that runs this script (its CLI file, run by this Node).
const npm = process.env.npm_execpath;
const run =
  npm === undefined
    ? spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
