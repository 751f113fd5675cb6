/**
 * `idea-pdp preview`: what a proposed policy file changes, for a pull request. Offline between two
 * files (the route's `agents`), or against a running service (the route's whole answer, replay
 * included), the file's bytes sent as they are so problems point into it.
 */
import { promises as fs } from 'node:fs';
import { MIN_TOKEN_FILE_CHARACTERS, readTokenFileSync, TokenFileProblem } from '../../schemas/token-file.js';
import { compileDocument } from '../domain/compile.js';
import { agentChanges } from '../domain/preview.js';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { checkProposal } from '../projects/proposal-check.js';
import { compilePolicy } from '../projects/parse.js';
import type { Output } from './commands.js';
import { UsageError } from './usage.js';

export interface PreviewOptions {
  readonly server: string | undefined;
  readonly project: string | undefined;
}

async function readPolicyFile(file: string): Promise<Buffer> {
  const stats = await fs.stat(file).catch(() => undefined);
  if (!stats?.isFile()) throw new UsageError(`not a file: ${file}`);
  if (stats.size > MAX_FILE_BYTES) throw new UsageError(`${file}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
  return fs.readFile(file);
}

/**
 * The token the service asks of a reader: PDP_DECIDE_TOKEN, or the file PDP_DECIDE_TOKEN_FILE names read
 * under the service's own rules for that file (docs/api.md#security), else none.
 */
function readerToken(): string | undefined {
  const file = process.env.PDP_DECIDE_TOKEN_FILE;
  if (file !== undefined && file !== '') {
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
  const token = process.env.PDP_DECIDE_TOKEN;
  return token === undefined || token === '' ? undefined : token;
}

export async function previewCommand(files: readonly string[], options: PreviewOptions, output: Output): Promise<number> {
  if (options.server === undefined) {
    if (options.project !== undefined) throw new UsageError('--project goes with --server');
    if (files.length !== 2) throw new UsageError('preview takes OLD NEW (two policy files), or NEW --server URL --project P');
    const [oldFile = '', newFile = ''] = files;
    const before = await compilePolicy(await readPolicyFile(oldFile));
    const proposal = checkProposal(await readPolicyFile(newFile));
    const errors = proposal.errors.map((one) => ({ ...one, file: newFile }));
    const agents = proposal.document === null ? [] : agentChanges(before, compileDocument(proposal.document, proposal.revision));
    output.out(`${JSON.stringify({ valid: proposal.valid, errors, agents }, null, 2)}\n`);
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
  const body = await readPolicyFile(newFile);
  const token = readerToken();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: new Uint8Array(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url.href} answered ${response.status}: ${text.slice(0, 500)}`);
  const answer = JSON.parse(text) as { valid?: unknown; errors?: { file: string }[] };
  const shown = { ...answer, errors: (answer.errors ?? []).map((one) => ({ ...one, file: newFile })) };
  output.out(`${JSON.stringify(shown, null, 2)}\n`);
  return answer.valid === true ? 0 : 1;
}
