/**
 * Compiles a project's files without stalling decisions: a small file at once (its parse takes
 * well under a millisecond), a bigger one first in a worker thread, where even a pathological
 * document (millions of keys or nested arrays) only delays its own project. What the worker finds
 * valid is parsed again here, which for a valid document is quick.
 */
import type { Worker } from 'node:worker_threads';
import type { PolicyDocument } from '../../schemas/index.js';
import type { AgentsFileState } from '../domain/agents-file.js';
import { compileDocument, revisionOf, type CompiledPolicy } from '../domain/compile.js';
import { IDEA_CATALOG, catalogSnapshot, type CatalogSnapshot, type ProjectCatalog } from '../domain/project-catalog.js';
import { compileChecked, parseAgentsChecked } from './parse-checks.js';
import type { ParseRequest, ParseResponse } from './parse-protocol.js';
import { checkProposal, type ProposalCheck } from './proposal-check.js';
import { spawnWorker } from './spawn-worker.js';

/** Files up to this size are compiled on the calling thread. */
const INLINE_PARSE_BYTES = 64 * 1024;
/** A file the worker has not compiled by then is unreadable (and read again at the next check). */
const PARSE_TIMEOUT_MS = 10_000;

export async function compilePolicy(bytes: Buffer, catalog: ProjectCatalog = IDEA_CATALOG): Promise<CompiledPolicy> {
  if (bytes.length <= INLINE_PARSE_BYTES) return compileChecked(bytes, catalog);
  const answer = await offThread.run('policy', bytes);
  if (!('policy' in answer)) throw new Error('the parse worker answered another question');
  if (answer.policy !== 'valid') return answer.policy;
  return compileDocument(JSON.parse(bytes.toString('utf8')) as PolicyDocument, revisionOf(bytes), catalog);
}

export async function parseAgents(bytes: Buffer): Promise<AgentsFileState> {
  if (bytes.length <= INLINE_PARSE_BYTES) return parseAgentsChecked(bytes);
  const answer = await offThread.run('agents', bytes);
  if (!('agents' in answer)) throw new Error('the parse worker answered another question');
  return answer.agents;
}

/** A proposed document (the preview's body), checked against the project's `catalog` off this thread unless it is small. */
export async function checkProposalOffThread(bytes: Buffer, catalog: ProjectCatalog = IDEA_CATALOG): Promise<ProposalCheck> {
  if (bytes.length <= INLINE_PARSE_BYTES) return checkProposal(bytes, catalog);
  const answer = await offThread.run('proposal', bytes, catalogSnapshot(catalog));
  if (!('proposal' in answer)) throw new Error('the parse worker answered another question');
  return answer.proposal;
}

interface Pending {
  resolve(response: ParseResponse): void;
  reject(error: Error): void;
  readonly timer: NodeJS.Timeout;
}

/** One worker, started on the first big file and kept. */
class ParseWorker {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  run(kind: ParseRequest['kind'], bytes: Buffer, catalog?: CatalogSnapshot): Promise<ParseResponse> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<ParseResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(worker, new Error(`not compiled within ${PARSE_TIMEOUT_MS} ms`));
      }, PARSE_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      // Held open while it has work: an idle worker never keeps the process alive.
      worker.ref();
      // A copy is handed over rather than cloned: structured cloning 4 MiB costs this thread ~17 ms, a memcpy ~1 ms.
      const copy = new Uint8Array(bytes.byteLength);
      copy.set(bytes);
      const request: ParseRequest = { id, kind, bytes: copy, ...(catalog === undefined ? {} : { catalog }) };
      worker.postMessage(request, [copy.buffer]);
    });
  }

  private start(): Worker {
    // By way of the folder's name, so the bundle of the offline commands (dist/server/cli) finds it too.
    const worker = spawnWorker(new URL('../projects/parse-worker.js', import.meta.url));
    worker.on('message', (response: ParseResponse) => {
      const pending = this.pending.get(response.id);
      if (pending === undefined) return;
      this.pending.delete(response.id);
      clearTimeout(pending.timer);
      if (this.pending.size === 0) worker.unref();
      pending.resolve(response);
    });
    worker.on('error', (error) => {
      this.fail(worker, error);
    });
    worker.on('exit', (code) => {
      this.fail(worker, new Error(`the parse worker exited (code ${code})`));
    });
    worker.unref();
    return worker;
  }

  /** Every file the worker was compiling fails (its project reads as unreadable); the next file starts a new worker. */
  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    void worker.terminate();
    for (const pending of this.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.pending.clear();
  }
}

const offThread = new ParseWorker();
