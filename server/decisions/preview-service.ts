/**
 * Previews a proposed policy document for a project (docs/api.md §12): its problems as
 * `idea-pdp check` reports them, the agents it changes, and the project's recent decisions decided
 * again under it. Writes nothing, opens no approval request, uses up no `once` answer.
 */
import type { PolicyDocument, PreviewResponse } from '../../schemas/index.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { lookingApprovals, type ApprovalsPort, type EphemeralLookup } from '../domain/decide.js';
import { POLICY_FILE, policyProblems } from '../domain/policy-check.js';
import { agentChanges, replay } from '../domain/preview.js';
import { unknownProject } from '../errors.js';
import { compilePolicy } from '../projects/parse.js';
import type { ReplayableDecision } from './recent-decisions.js';

export interface PreviewServiceOptions {
  readonly policyOf: (project: string) => CompiledPolicy | undefined;
  readonly recentOf: (project: string) => readonly ReplayableDecision[];
  readonly ephemeral: EphemeralLookup;
  /** The live temporary grants: a call a grant allows now is allowed under either document. */
  readonly granted: ApprovalsPort['granted'];
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

  async preview(project: string, document: PolicyDocument): Promise<PreviewResponse> {
    const before = this.options.policyOf(project);
    if (before === undefined) throw unknownProject(project);
    // The text the document would have in its file, so a problem's line and column point into it.
    const text = `${JSON.stringify(document, null, 2)}\n`;
    const after = await compilePolicy(Buffer.from(text, 'utf8'));
    const errors = policyProblems(POLICY_FILE, text, after);
    const base = { project, revision: before.revision, errors };
    if (after.status === 'invalid') return { ...base, valid: false, agents: [], replay: NO_REPLAY };
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
        approvals: lookingApprovals(this.options.granted),
      }),
    };
  }
}
