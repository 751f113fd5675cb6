// Run by `npm pack` (prepack): the tarball ships examples/projects, and running the service in a
// clone edits them; packing refuses while they differ from what git has committed.
import { execFileSync } from 'node:child_process';
import process from 'node:process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let changes;
try {
  changes = execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--', 'examples/projects'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
} catch {
  // Not a git checkout (an unpacked tarball): nothing to compare with.
  process.exit(0);
}
if (changes.trim() !== '') {
  process.stderr.write(
    `npm pack: examples/projects differs from the last commit, and the tarball would ship it:\n${changes}` +
      'Commit it, or restore it with: git checkout -- examples/projects && git clean -fd examples/projects\n',
  );
  process.exit(1);
}
