/**
 * Previews a proposed policy document for a project (docs/api.md#policy-as-code-idea-pdp-and-previews): its problems as
 * `idea-pdp check` reports them, the agents it changes, and the project's recent decisions decided
 * again under it. Writes nothing, opens no approval request, uses up no `once` answer.
 */
import type { PreviewResponse } from '../../schemas/index.js';
import { compileDocument } from '../domain/compile.js';
import type { ApprovalsPort, EphemeralLookup } from '../domain/decide.js';
import { agentChanges, replay } from '../domain/preview.js';
import { IDEA_CATALOG, INVALID_SERVERS_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { unknownProject } from '../errors.js';
import { checkProposalOffThread } from '../projects/parse.js';
import type { Projects } from '../projects/projects.js';
import type { DiscoveredTools } from '../servers/discovered-tools.js';
import type { ReplayableDecision } from './recent-decisions.js';

export interface PreviewServiceOptions {
  /** The served projects: the policy a proposal is compared with, and the servers file its catalog comes from. */
  readonly projects: Pick<Projects, 'policyOf' | 'serversOf'>;
  /** The arguments the project's servers reported for their tools, which a proposal's conditions may name. */
  readonly discovered: Pick<DiscoveredTools, 'catalogWithArguments'>;
  /** The recent decisions a preview replays, oldest first. */
  readonly recent: { replayable(project: string): readonly ReplayableDecision[] };
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
    if (this.options.projects.policyOf(project) === undefined) throw unknownProject(project);
    const proposal = await checkProposalOffThread(body, this.catalogOf(project));
    // Read after the check: a change saved meanwhile is what the proposal is compared with.
    const before = this.options.projects.policyOf(project);
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
        decisions: this.options.recent.replayable(project),
        before,
        after,
        ephemeral: this.options.ephemeral,
        grants: this.options.grants,
      }),
    };
  }

  /** The tools the project knows, with the arguments its servers reported: what a proposal is checked against. */
  private catalogOf(project: string): ProjectCatalog {
    const servers = this.options.projects.serversOf(project);
    // Under an invalid servers file, a `<server>/<tool>` is unknown because of that file, and the check says so.
    if (servers?.status !== 'ok') return servers === undefined ? IDEA_CATALOG : INVALID_SERVERS_CATALOG;
    return this.options.discovered.catalogWithArguments(project, servers.catalog);
  }
}
