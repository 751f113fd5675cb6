/**
 * `idea-pdp fmt [--check] [DIR...]` (docs/policy-as-code.md): writes each policy file in the one
 * canonical form the service writes (2-space JSON, tools in catalog order, keys in the documented
 * order), so a diff in review shows what changed and nothing else.
 */
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { escapeControls } from '../../schemas/display.js';
import { compilePolicyFile } from '../domain/compile.js';
import { serializeDocument } from '../domain/edit.js';
import { POLICY_FILE } from '../domain/policy-check.js';
import { walkedProjectFolders, shown, plural, type Output } from './commands.js';

export interface FmtOptions {
  /** Only say which files are not formatted (exit 1), write nothing. */
  readonly check: boolean;
}

type FileOutcome = 'formatted' | 'unchanged' | 'missing' | 'not_formatted' | 'refused';

/** Formats (or, with `check`, judges) the policy file of each folder; exit 1 when one is not formatted or cannot be. */
export async function fmtCommand(dirs: readonly string[], options: FmtOptions, output: Output): Promise<number> {
  const outcomes: FileOutcome[] = [];
  for (const dir of await walkedProjectFolders(dirs)) outcomes.push(await formatFile(dir, options, output));
  const count = (outcome: FileOutcome): number => outcomes.filter((one) => one === outcome).length;
  const files = outcomes.length - count('missing');
  const failed = count('not_formatted') + count('refused');
  const done = options.check ? `${plural(files - failed, 'file')} formatted` : `${plural(count('formatted'), 'file')} rewritten`;
  output.out(`${done}${failed > 0 ? `, ${plural(failed, 'file')} ${options.check ? 'not formatted' : 'refused'}` : ''}\n`);
  return failed > 0 ? 1 : 0;
}

async function formatFile(dir: string, options: FmtOptions, output: Output): Promise<FileOutcome> {
  const file = path.join(dir, POLICY_FILE);
  // One line per file, whatever its folder is named (line breaks, ANSI escapes).
  const name = escapeControls(shown(dir, POLICY_FILE));
  let handle: fs.FileHandle;
  try {
    // No link is followed: the service refuses to write through one either.
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    output.err(
      `${name}: cannot be formatted: ${(error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a link' : (error as Error).message}\n`,
    );
    return 'refused';
  }
  let bytes: Buffer;
  let mode: number;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      output.err(`${name}: cannot be formatted: not a regular file\n`);
      return 'refused';
    }
    mode = stats.mode & 0o777;
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  const compiled = compilePolicyFile(bytes);
  if (compiled.status === 'invalid' || compiled.document === null) {
    const why = compiled.status === 'invalid' ? compiled.error.message : 'no document';
    output.err(`${name}: cannot be formatted: ${why} (idea-pdp check says where)\n`);
    return 'refused';
  }
  const canonical = serializeDocument(compiled.document);
  if (canonical === bytes.toString('utf8')) return 'unchanged';
  if (options.check) {
    output.out(`${name}: not formatted (idea-pdp fmt writes it)\n`);
    return 'not_formatted';
  }
  // A reader never sees half a file: the canonical text is written beside it, then renamed over it.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.fmt-${String(process.pid)}.tmp`);
  await fs.writeFile(temporary, canonical, { flag: 'wx', mode });
  try {
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
  output.out(`formatted ${name}\n`);
  return 'formatted';
}
