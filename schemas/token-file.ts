/**
 * Token files as the service and `idea-mcp-proxy` read them (docs/api.md#security), one reader for
 * both so the rules cannot drift: the file is opened without following links (`O_NOFOLLOW`) and
 * every check is made on the descriptor that was opened (`fstat`), then read from it, so nothing
 * can be swapped in between. Refused, like sshd's StrictModes: a link, anything but a regular file,
 * a file of another owner, one that group or others may read or write, one too short to be a token.
 * Node only (not part of the wire schemas the panel imports).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The fewest characters a token file may hold: 16 is 96 bits in base64. */
export const MIN_TOKEN_FILE_CHARACTERS = 16;
/** The largest token file read: a token is one short line. */
const MAX_TOKEN_FILE_BYTES = 4096;

export type TokenFileProblemKind = 'missing' | 'link' | 'unreadable' | 'not_file' | 'owner' | 'mode' | 'size' | 'short';

/** Why a token file is refused: `why` follows the file's name in a message, `fix` says what to do. */
export class TokenFileProblem extends Error {
  override readonly name = 'TokenFileProblem';

  constructor(
    readonly kind: TokenFileProblemKind,
    readonly why: string,
    readonly fix: string,
  ) {
    super(`${why}. ${fix}`);
  }
}

export interface TokenFileRules {
  /** How messages name the setting that gave the file: `PDP_DECIDE_TOKEN_FILE`, `--token-file`. */
  readonly setting: string;
  /** Whose the file must be, as messages say it: "the service's", "this user's". */
  readonly owner: string;
  /** Root may own it too (a secret an administrator provisions); else only the reader's own user. */
  readonly rootMayOwn: boolean;
  /** Fewer characters are refused; 0 leaves the check of the text to the caller. */
  readonly minCharacters: number;
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8)}`;

/**
 * The trimmed text of the token file `file`.
 * @throws {@link TokenFileProblem} when it is missing (`kind: "missing"`) or refused.
 */
export function readTokenFileSync(file: string, rules: TokenFileRules): string {
  const { setting } = rules;
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted at the name opens at once, and fstat then refuses it.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP')
      throw new TokenFileProblem('link', 'is a symbolic link', `Point ${setting} at the file itself, not at a link to it.`);
    const why = `cannot be opened (${code ?? String(error)})`;
    throw new TokenFileProblem(code === 'ENOENT' ? 'missing' : 'unreadable', why, `Check that ${setting} names a readable file.`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile())
      throw new TokenFileProblem('not_file', 'is not a regular file', `Point ${setting} at a regular file holding the token.`);
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
    if (uid !== undefined && info.uid !== uid && !(rules.rootMayOwn && info.uid === 0)) {
      const whose = rules.rootMayOwn ? `neither ${rules.owner} (uid ${String(uid)}) nor root` : `not ${rules.owner} (uid ${String(uid)})`;
      throw new TokenFileProblem('owner', `belongs to uid ${String(info.uid)}, ${whose}`, `Run: chown ${String(uid)} ${file}`);
    }
    if ((info.mode & 0o077) !== 0) {
      throw new TokenFileProblem('mode', `is readable or writable by group or others (mode ${octal(info.mode)})`, `Run: chmod 600 ${file}`);
    }
    if (info.size > MAX_TOKEN_FILE_BYTES)
      throw new TokenFileProblem('size', 'is too large to hold a token', 'Put the token alone in the file.');
    const token = readAll(fd).trim();
    if (token.length < rules.minCharacters) {
      throw new TokenFileProblem(
        'short',
        `holds ${String(token.length)} characters, fewer than ${String(rules.minCharacters)}`,
        'Put a long random token in it, e.g. `openssl rand -hex 32`.',
      );
    }
    return token;
  } finally {
    closeSync(fd);
  }
}

/** The file behind `fd`, refused past the largest token file even if it grew after fstat. */
function readAll(fd: number): string {
  const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
  let length = 0;
  for (;;) {
    const read = readSync(fd, buffer, length, buffer.length - length, null);
    if (read === 0) break;
    length += read;
    if (length > MAX_TOKEN_FILE_BYTES)
      throw new TokenFileProblem('size', 'is too large to hold a token', 'Put the token alone in the file.');
  }
  return buffer.toString('utf8', 0, length);
}
