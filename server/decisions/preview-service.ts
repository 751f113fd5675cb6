/**
 * Previews a proposed policy document for a project (docs/api.md#policy-as-code-idea-pdp-and-previews): its problems as
 * `idea-pdp check` reports them, the agents it changes, and the project's recent decisions decided
 * again under it. Writes nothing, opens no approval request, uses up no `once` answer.
 */
import type { PreviewResponse } from '../../schemas/index.js';
import { compileDocument, type CompiledPolicy } from '../domain/compile.js';
import type { ApprovalsPort, EphemeralLookup } from '../domain/decide.js';
import { agentChanges, replay } from '../domain/preview.js';
import type { ProjectCatalog } from '../domain/project-catalog.js';
import { unknownProject } from '../errors.js';
import { checkProposalOffThread } from '../projects/parse.js';
import type { ReplayableDecision } from './recent-decisions.js';

export interface PreviewServiceOptions {
  readonly policyOf: (project: string) => CompiledPolicy | undefined;
  /** The tools the project knows, with the arguments its servers reported: what the proposal is checked against. */
  readonly catalogOf: (project: string) => ProjectCatalog;
  readonly recentOf: (project: string) => readonly ReplayableDecision[];
  readonly ephemeral: EphemeralLookup;
  /** The live temporary grants: a call a grant allows now is allowed under either document. */
  readonly grants: Pick<ApprovalsPort, 'granted'>;
}

const NO_REPLAY: PreviewResponse['replay'] = {
  decisions: 0,
  from: null,
  to: null,
  counts: { allowToDeny: 0, denyToAllow: 0, toAsk: 0, notReplayable: 0 },
  changed: [],
};

export class PreviewService {
  constructor(private readonly options: PreviewServiceOptions) {}

  /** `body`: the request's bytes, the document itself or `{ "document": … }`. */
  async preview(project: string, body: Buffer): Promise<PreviewResponse> {
    if (this.options.policyOf(project) === undefined) throw unknownProject(project);
    const proposal = await checkProposalOffThread(body, this.options.catalogOf(project));
    // Read after the check: a change saved meanwhile is what the proposal is compared with.
    const before = this.options.policyOf(project);
    if (before === undefined) throw unknownProject(project);
    const base = { project, revision: before.revision, errors: proposal.errors };
    if (!proposal.valid || proposal.document === null) return { ...base, valid: false, agents: [], replay: NO_REPLAY };
    const after = compileDocument(proposal.document, proposal.revision, before.status === 'ok' ? before.catalog : undefined);
    return {
      ...base,
      valid: true,
      agents: agentChanges(before, after),
      replay: replay({
        project,
        decisions: this.options.recentOf(project),
        before,
        after,
        ephemeral: this.options.ephemeral,
        grants: this.options.grants,
      }),
    };
  }
}
