/** The messages between parse.ts and its worker thread (parse-worker.ts). */
import type { AgentsFileState } from '../domain/agents-file.js';
import type { InvalidPolicy } from '../domain/compile.js';
import type { CatalogSnapshot } from '../domain/project-catalog.js';
import type { ProposalCheck } from './proposal-check.js';

export interface ParseRequest {
  readonly id: number;
  readonly kind: 'policy' | 'agents' | 'proposal';
  readonly bytes: Uint8Array;
  /** For a proposal: the project's catalog, which its names and conditions are checked against. */
  readonly catalog?: CatalogSnapshot;
}

/** A valid policy is answered as `'valid'`: the main thread parses it again, cheaply, rather than receive a copy. */
export type ParseResponse =
  | { readonly id: number; readonly policy: InvalidPolicy | 'valid' }
  | { readonly id: number; readonly agents: AgentsFileState }
  | { readonly id: number; readonly proposal: ProposalCheck };
