/**
 * `idea-pdp preview`: what a proposed policy file changes, for a pull request. Offline between two
 * files (the route's `agents`), or against a running service (the route's whole answer, replay
 * included), the file's bytes sent as they are so problems point into it.
 */
import type { Readable } from 'node:stream';
import { MIN_TOKEN_FILE_CHARACTERS, readTokenFileSync, TokenFileProblem } from '../../schemas/token-file.js';
import { readerTokenSettingOf } from '../config.js';
import { compileDocument } from '../domain/compile.js';
import { agentChanges } from '../domain/preview.js';
import { checkProposal } from '../projects/proposal-check.js';
import { compilePolicy } from '../projects/parse.js';
import type { Output } from './commands.js';
import { readPolicyInput } from './policy-input.js';
import { previewSummary, type PreviewShown } from './preview-summary.js';
import { UsageError } from './usage.js';

export interface PreviewOptions {
  readonly server: string | undefined;
  readonly project: string | undefined;
  /** Print the document instead of the reviewer's summary. */
  readonly json: boolean;
}

/** How a problem names the file it is in: `-` is stdin. */
const fileName = (file: string): string => (file === '-' ? 'stdin' : file);

/**
 * The token the service asks of a reader: PDP_DECIDE_TOKEN, or the file PDP_DECIDE_TOKEN_FILE names read
 * under the service's own rules for that file (docs/api.md#security), else none.
 */
function readerToken(): string | undefined {
  const setting = readerTokenSettingOf();
  if (setting === undefined || 'token' in setting) return setting?.token;
  const { file } = setting;
  try {
    return readTokenFileSync(file, {
      setting: 'PDP_DECIDE_TOKEN_FILE',
      owner: "this user's",
      rootMayOwn: true,
      minCharacters: MIN_TOKEN_FILE_CHARACTERS,
    });
  } catch (error) {
    if (error instanceof TokenFileProblem) throw new UsageError(`PDP_DECIDE_TOKEN_FILE ${file} ${error.why}. ${error.fix}`);
    throw error;
  }
}

function show(preview: PreviewShown, options: PreviewOptions, output: Output): void {
  output.out(options.json ? `${JSON.stringify(preview, null, 2)}\n` : previewSummary(preview));
}

export async function previewCommand(
  files: readonly string[],
  options: PreviewOptions,
  output: Output,
  stdin: Readable = process.stdin,
): Promise<number> {
  if (options.server === undefined) {
    if (options.project !== undefined) throw new UsageError('--project goes with --server');
    if (files.length !== 2) throw new UsageError('preview takes OLD NEW (two policy files), or NEW --server URL --project P');
    const [oldFile = '', newFile = ''] = files;
    if (oldFile === '-' && newFile === '-') throw new UsageError('only one of OLD and NEW can be - (stdin)');
    const before = await compilePolicy(await readPolicyInput(oldFile, stdin));
    const proposal = checkProposal(await readPolicyInput(newFile, stdin));
    const errors = proposal.errors.map((one) => ({ ...one, file: fileName(newFile) }));
    const agents = proposal.document === null ? [] : agentChanges(before, compileDocument(proposal.document, proposal.revision));
    show({ valid: proposal.valid, errors, agents }, options, output);
    return proposal.valid ? 0 : 1;
  }
  if (files.length !== 1) throw new UsageError('preview NEW --server URL --project P takes one file');
  if (options.project === undefined) throw new UsageError('--server needs --project');
  let url: URL;
  try {
    url = new URL(
      `projects/${encodeURIComponent(options.project)}/mcp-tool-permissions/preview`,
      options.server.endsWith('/') ? options.server : `${options.server}/`,
    );
  } catch {
    throw new UsageError(`--server is not a URL: ${options.server}`);
  }
  const [newFile = ''] = files;
  const body = await readPolicyInput(newFile, stdin);
  const token = readerToken();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: new Uint8Array(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url.href} answered ${response.status}: ${text.slice(0, 500)}`);
  const answer = JSON.parse(text) as Omit<PreviewShown, 'valid' | 'errors'> & { valid?: unknown; errors?: PreviewShown['errors'] };
  const valid = answer.valid === true;
  show({ ...answer, valid, errors: (answer.errors ?? []).map((one) => ({ ...one, file: fileName(newFile) })) }, options, output);
  return valid ? 0 : 1;
}
