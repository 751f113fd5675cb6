/**
 * The draft's preview (docs/api.md#policy-as-code-idea-pdp-and-previews): while the draft differs from the saved policy, the whole
 * document a save would leave is sent to `POST .../mcp-tool-permissions/preview` and the answer,
 * what it would have changed among recent calls, goes into the store for the save bar. Only the
 * latest draft's answer counts; the preview never blocks a save.
 */
import { asApiError, type PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import { previewLines, proposedDocument, savedDocument } from '../model/preview-model.js';
import type { DraftPreview, PanelState } from '../state/state.js';
import type { Store } from '../state/store.js';
import type { PolicyDocument } from '../../../schemas/policy.js';

/**
 * A user clicks a few boxes a second: one preview per pause of 300 ms, not one per click, so the
 * sentence does not flicker through drafts the user passes by (a preview of 1,000 decisions costs
 * the service about 2.4 ms, so the pause is for the reader, not the server).
 */
export const PREVIEW_DEBOUNCE_MS = 300;

interface Proposal {
  project: string;
  document: PolicyDocument;
  /** The project, the revision compared with and the document: a new key is a new preview. */
  key: string;
}

export class DraftPreviews {
  /** The key of the proposal being previewed (null: nothing to preview). */
  private wanted: string | null = null;
  /** Bumped for every new proposal: an answer of an earlier one is dropped. */
  private sequence = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: Store,
    private readonly api: PermissionsApi,
  ) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  /** A store listener: a new draft (or a new saved revision under it) is previewed after a pause. */
  follow(): void {
    const proposal = this.proposal();
    const key = proposal?.key ?? null;
    if (key === this.wanted) return;
    this.wanted = key;
    this.sequence += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const shown = this.state.draftPreview;
    if (proposal === null) {
      if (shown === null) return;
      this.store.update((state) => {
        state.draftPreview = null;
      });
      return;
    }
    const sequence = this.sequence;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.send(sequence, proposal);
    }, PREVIEW_DEBOUNCE_MS);
    if (shown !== null && !shown.pending) {
      // The sentences shown describe an earlier draft until the answer comes.
      this.store.update((state) => {
        state.draftPreview = { ...shown, pending: true };
      });
    }
  }

  /** The document to preview, or null when there is no draft or it equals the saved policy. */
  private proposal(): Proposal | null {
    const { catalog, view, projectId, revision, draft } = this.state;
    if (catalog === null || view === null || projectId === null || revision === null || draft === null) return null;
    if (view.status !== 'ok') return null;
    const document = proposedDocument(catalog, view, draft);
    const text = JSON.stringify(document);
    if (text === JSON.stringify(savedDocument(view))) return null;
    return { project: projectId, document, key: JSON.stringify([projectId, revision, text]) };
  }

  private async send(sequence: number, proposal: Proposal): Promise<void> {
    try {
      const answer = await this.api.preview(proposal.project, proposal.document);
      if (sequence !== this.sequence) return;
      const firstError = answer.errors.find((problem) => problem.severity === 'error');
      const preview: DraftPreview = answer.valid
        ? { lines: previewLines(answer), error: null, pending: false }
        : { lines: [], error: `Aperçu des appels récents indisponible : ${firstError?.message ?? 'document refusé'}.`, pending: false };
      this.store.stage((state) => {
        state.draftPreview = preview;
      });
    } catch (error) {
      if (sequence !== this.sequence) return;
      const french = frenchError(asApiError(error));
      this.store.stage((state) => {
        state.draftPreview = { lines: [], error: `Aperçu des appels récents indisponible. ${french.message}`, pending: false };
      });
    }
    // After the try: a listener's failure is not this read's failure.
    this.store.changed();
  }
}
