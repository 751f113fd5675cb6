/** What the bench's command-line scripts share: their flags, and the Debian tools they install. */
import { execFileSync } from 'node:child_process';

/** `--name=value` and `--name` (then `'true'`) flags; anything else is refused. */
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unexpected argument ${arg} (see bench/README.md)`);
    flags.set(match[1]!, match[2] ?? 'true');
  }
  return flags;
}

export function hasCommand(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `command` available, installing the Debian package `pkg` with apt-get when it is missing
 * and the script runs as root; answers whether it is there now.
 */
export function ensureDebianCommand(command: string, pkg: string, log: (line: string) => void): boolean {
  if (hasCommand(command)) return true;
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) return false;
  log(`${command} is missing: installing it with apt-get (Debian package "${pkg}")...`);
  try {
    execFileSync('sh', ['-c', `apt-get install -y ${pkg} || (apt-get update && apt-get install -y ${pkg})`], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 300_000,
    });
  } catch {
    // Answered by the check below.
  }
  return hasCommand(command);
}
