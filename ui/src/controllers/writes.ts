/**
 * Every write of the panel, always with `If-Match`: saving a draft (re-applied on a newer revision
 * when the concurrent change does not touch it, a conflict the user settles otherwise), the resets
 * with their few seconds of "Annuler", and the repair of an invalid file.
 */
import type { PolicyLimits } from '../../../schemas/limits.js';
import type { PolicyDocument } from '../../../schemas/policy.js';
import { ApiError, asApiError, type PermissionsApi, type VersionedView } from '../api/api.js';
import { basisOf, sameBasis, type TargetBasis } from '../model/draft-rebase.js';
import { frenchError } from '../model/errors-fr.js';
import { conditionsToSave, rowsDiffer } from '../model/conditions-model.js';
import { draftProblem } from '../state/draft-problems.js';
import { limitsDiffer, limitsToSave, savedLimits, withLimits } from '../model/limits-model.js';
import { conditionsOf, listsToSave, sameSet, sameTarget, savedTarget, type TargetKey } from '../model/model.js';
import type { Navigation } from './navigation.js';
import { abandonMessage, canWrite, dirty, editable, targetName } from '../state/selectors.js';
import { openTokenForm, type PanelState, type Problem, type RepairChoice, type Undo } from '../state/state.js';
import type { Store } from '../state/store.js';
import { adoptView, applyView } from '../state/view-sync.js';

export const SAVED_FEEDBACK_MS = 2500;
export const UNDO_MS = 10_000;
/** A save is re-applied at most this many times on revisions that keep changing under it. */
const MAX_REAPPLY = 3;

/** Thrown inside a write when the concurrent change touched the target: settled by the user. */
class Touched extends Error {}

export class Writes {
  constructor(
    private readonly store: Store,
    private readonly api: PermissionsApi,
    private readonly navigation: Navigation,
  ) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  async save(): Promise<void> {
    const state = this.state;
    const { catalog, projectId, draft } = state;
    if (catalog === null || projectId === null || draft === null || state.confirmation !== null || state.saving) return;
    if (state.conflict !== null) return;
    const listed = new Set([...draft.allowed, ...draft.ask]);
    // An incomplete condition or an invalid limit is said beside Enregistrer; nothing is sent until it is fixed or removed.
    if (draftProblem(draft) !== null) return;
    const conditions = conditionsToSave(draft.conditions, listed);
    const limits = limitsToSave(draft.limits, listed);
    // Without limits before or after, the field is left out: the service then keeps none either.
    const sendsLimits = Object.keys(limits).length > 0 || Object.keys(savedLimits(state.view, draft.target)).length > 0;
    const agentId = draft.target.kind === 'agent' ? draft.target.agentId : null;
    const name = targetName(this.state, draft.target);
    const expected: Expected = {
      get: () => draft.base,
      set: (basis) => {
        this.store.stage(() => {
          draft.base = basis;
        });
      },
    };
    await this.write(
      async () => {
        const { result, reapplied } = await this.reapplying(draft.target, draft.createsOverride, expected, state.revision, (revision) =>
          this.api.putAllowlist(
            projectId,
            agentId,
            sendsLimits
              ? withLimits(listsToSave(catalog, draft.allowed, draft.ask, conditions), limits)
              : listsToSave(catalog, draft.allowed, draft.ask, conditions),
            revision,
          ),
        );
        this.applyWritten(result);
        this.store.stage((next) => {
          next.draft = null;
          next.drift = null;
          next.confirmation = null;
          this.notify(
            next,
            reapplied
              ? `Permissions enregistrées pour « ${name} » (réappliquées sur la version actuelle de la policy)`
              : 'Permissions enregistrées',
          );
        });
      },
      () => {
        // The newer view is already applied: turn the draft into a conflict the user settles.
        this.store.stage((next) => {
          if (next.view !== null && next.revision !== null) adoptView(next, { view: next.view, revision: next.revision });
          if (next.conflict !== null) {
            next.conflict.fromSave = true;
            next.focusAfterRender = 'conflict-keep';
          }
        });
      },
    );
  }

  /**
   * Runs `call` with `revision`; on `412` re-reads the view and, when the target is as the write
   * expected, runs it again with the new revision. Throws {@link Touched} otherwise.
   */
  private async reapplying(
    target: TargetKey,
    seeded: boolean,
    expected: Expected,
    revision: string | null,
    call: (revision: string) => Promise<VersionedView>,
  ): Promise<{ result: VersionedView; reapplied: boolean }> {
    const state = this.state;
    let current = revision ?? '';
    for (let attempt = 0; ; attempt += 1) {
      try {
        return { result: await call(current), reapplied: attempt > 0 };
      } catch (error) {
        const failure = asApiError(error);
        if (failure.code !== 'revision_mismatch' || attempt >= MAX_REAPPLY || state.projectId === null) throw failure;
        const fresh = await this.api.permissions(state.projectId);
        this.store.stage((next) => {
          applyView(next, fresh);
        });
        // The file broke meanwhile: say so, not "someone else changed it".
        if (fresh.view.status === 'invalid') throw new ApiError(409, 'policy_invalid', failure.message);
        const after = basisOf(fresh.view, target, seeded);
        if (!sameBasis(expected.get(), after)) throw new Touched();
        expected.set(after);
        current = fresh.revision;
      }
    }
  }

  /** Takes the view a write answered; a write that left the file invalid is a problem, never a success. */
  private applyWritten(result: VersionedView): void {
    this.store.stage((state) => {
      applyView(state, result);
    });
    if (result.view.status !== 'ok') throw new ApiError(200, 'written_invalid', result.view.error?.message ?? 'invalid after write');
  }

  /** Common frame of a write: busy flag, French problems, token form on 401, concurrent changes. */
  private async write(run: () => Promise<void>, onTouched: () => void): Promise<void> {
    const state = this.state;
    this.store.update((next) => {
      next.saving = true;
      next.problem = null;
    });
    try {
      await run();
    } catch (error) {
      if (error instanceof Touched) {
        onTouched();
        return;
      }
      const failure = asApiError(error);
      const problem = this.problemOf(failure);
      this.store.stage((next) => {
        next.problem = problem;
      });
      if (failure.code === 'policy_invalid' && state.projectId !== null) {
        // Show the invalid file and its repair; the draft stays in memory.
        await this.api.permissions(state.projectId).then(
          (fresh) => {
            this.store.stage((next) => {
              applyView(next, fresh);
            });
          },
          () => undefined,
        );
      }
      if (problem.kind === 'auth') {
        this.store.stage((next) => {
          next.role = null;
          openTokenForm(next, 'Le service a refusé ce jeton pour une modification : saisissez le jeton administrateur.');
        });
      }
    } finally {
      this.store.update((next) => {
        next.saving = false;
      });
    }
  }

  private problemOf(failure: ApiError): Problem {
    const french = frenchError(failure);
    if (failure.code === 'policy_invalid' || failure.code === 'written_invalid') {
      if (failure.code === 'written_invalid') return { kind: 'invalid', ...french };
      return { kind: 'invalid', message: `Enregistrement impossible : policy invalide. ${french.message}`, detail: french.detail };
    }
    if (failure.status === 401) return { kind: 'auth', ...french };
    return { kind: 'error', message: `Enregistrement impossible. ${french.message}`, detail: french.detail };
  }

  private touchedProblem(message: string): () => void {
    return () => {
      this.store.stage((state) => {
        state.problem = { kind: 'error', message, detail: null };
      });
    };
  }

  /** Shows a short confirmation where the user is (`state` being changed), and announces it. */
  private notify(state: PanelState, text: string, ms = SAVED_FEEDBACK_MS): void {
    const notice = { text, until: Date.now() + ms };
    state.notice = notice;
    state.announcement = text;
    setTimeout(() => {
      if (this.state.notice !== notice) return;
      this.store.update((next) => {
        next.notice = null;
        if (next.announcement === text) next.announcement = '';
      });
    }, ms);
  }

  // ------------------------------------------------------------------ conflicts

  /** "Garder mes modifications": the draft is re-based on the newer version (and saved if it came from a save). */
  async keepMine(): Promise<void> {
    const state = this.state;
    const { conflict, draft, view } = state;
    if (conflict === null || draft === null || view === null) return;
    const seeded = draft.target.kind === 'agent' && conflict.after.own === null;
    const saved = savedTarget(view, draft.target);
    const listed = new Set([...draft.allowed, ...draft.ask]);
    const same =
      saved !== undefined &&
      sameSet(saved.allowed, draft.allowed) &&
      sameSet(saved.ask, draft.ask) &&
      !rowsDiffer(draft.conditions, saved.conditions, listed) &&
      !limitsDiffer(draft.limits, savedLimits(view, draft.target), listed);
    this.store.stage((next) => {
      draft.createsOverride = seeded;
      draft.base = basisOf(view, draft.target, seeded);
      next.conflict = null;
      if (!draft.createsOverride && !draft.dropsUnknown && same) next.draft = null;
      next.focusAfterRender = 'save';
    });
    if (conflict.fromSave && state.draft !== null) await this.save();
    else this.store.changed();
  }

  /** "Prendre l'autre version": the draft is dropped, the newer version shown. */
  takeTheirs(): void {
    this.store.update((state) => {
      state.conflict = null;
      state.draft = null;
      state.drift = null;
      state.confirmation = null;
      state.focusAfterRender = editable(state) ? 'save' : 'editor-title';
      this.notify(state, 'Version actuelle affichée : vos modifications ont été abandonnées.');
    });
  }

  // ------------------------------------------------------------------ resets with undo

  /** "Réinitialiser l'override", "Revenir à la lecture seule", "Supprimer l'override inutile". */
  async reset(): Promise<void> {
    const state = this.state;
    const { projectId, target, catalog, view } = state;
    if (projectId === null || catalog === null || view === null || !canWrite(this.state) || state.saving) return;
    if (dirty(this.state)) {
      this.navigation.confirmDiscardDraft(abandonMessage(this.state), () => void this.reset());
      return;
    }
    const saved = savedTarget(view, target);
    if (!saved?.overriding) return;
    // The undo writes the limits back too: a reset that came back without them would lift a cap.
    const lists = listsToSave(catalog, saved.allowed, saved.ask, saved.conditions);
    const previous = Object.keys(savedLimits(view, target)).length === 0 ? lists : withLimits(lists, savedLimits(view, target));
    const agentId = target.kind === 'agent' ? target.agentId : null;
    let base = basisOf(view, target, false);
    const expected: Expected = { get: () => base, set: (basis) => (base = basis) };
    const name = targetName(this.state, target);
    await this.write(async () => {
      const { result } = await this.reapplying(target, false, expected, state.revision, (revision) =>
        this.api.deleteTarget(projectId, agentId, revision),
      );
      this.applyWritten(result);
      const message =
        target.kind === 'default'
          ? 'Défaut projet remis en lecture seule.'
          : `Override de « ${name} » supprimé : l\u2019agent hérite du défaut projet.`;
      const after = basisOf(result.view, target, false);
      const undo: Undo = { target, message, previous, revision: result.revision, after, until: Date.now() + UNDO_MS };
      this.store.stage((next) => {
        next.undo = undo;
        next.announcement = `${message} « Annuler » reste possible pendant ${UNDO_MS / 1000} secondes.`;
        next.focusAfterRender = 'undo';
      });
      setTimeout(() => {
        this.expireUndo(undo);
      }, UNDO_MS);
    }, this.touchedProblem('Rien n\u2019a été réinitialisé : cette cible a été modifiée ailleurs. Vérifiez son état actuel.'));
  }

  private expireUndo(undo: Undo): void {
    if (this.state.undo !== undo) return;
    this.store.update((state) => {
      state.undo = null;
      if (document.activeElement?.id === 'undo') state.focusAfterRender = editable(state) ? 'save' : 'editor-title';
    });
  }

  /** "Annuler" after a reset: the previous allowlist is written back, guarded by the reset's revision. */
  async undo(): Promise<void> {
    const state = this.state;
    const undo = state.undo;
    if (undo === null || state.projectId === null || state.saving || !sameTarget(undo.target, state.target)) return;
    this.store.stage((next) => {
      next.undo = null;
    });
    const projectId = state.projectId;
    const agentId = undo.target.kind === 'agent' ? undo.target.agentId : null;
    let base = undo.after;
    const expected: Expected = { get: () => base, set: (basis) => (base = basis) };
    await this.write(async () => {
      const { result } = await this.reapplying(undo.target, false, expected, undo.revision, (revision) =>
        this.api.putAllowlist(projectId, agentId, undo.previous, revision),
      );
      this.applyWritten(result);
      this.store.stage((next) => {
        next.focusAfterRender = undo.target.kind === 'default' ? 'reset-default' : 'reset-override';
        this.notify(
          next,
          undo.target.kind === 'default' ? 'Défaut projet rétabli.' : `Override de « ${targetName(next, undo.target)} » rétabli.`,
        );
      });
    }, this.touchedProblem('Annulation impossible : cette cible a été modifiée ailleurs depuis la réinitialisation. Rien n\u2019a été rétabli.'));
  }

  // ------------------------------------------------------------------ repair of an invalid file

  chooseRepair(kind: RepairChoice['kind']): void {
    const catalog = this.state.catalog;
    const lastValid = this.state.view?.lastValid ?? null;
    if (catalog === null) return;
    let repair: RepairChoice;
    if (kind === 'read-only') {
      repair = { kind, document: { version: 1, agents: [] }, dropped: [] };
    } else {
      if (lastValid === null) return;
      const known = new Set(catalog.tools.map((tool) => tool.name));
      const dropped = new Set<string>();
      const keep = (names: readonly string[]): string[] =>
        names.filter((name) => {
          if (!known.has(name)) dropped.add(name);
          return known.has(name);
        });
      const source = lastValid.document;
      const document: PolicyDocument = { version: 1 };
      // Tools on ask are kept (never one that is also allowed: the API refuses a name in both lists).
      const lists = (policy: { allowedTools: string[]; askTools?: string[] | undefined; limits?: PolicyLimits | undefined }) => {
        const allowedTools = keep(policy.allowedTools);
        const askTools = keep(policy.askTools ?? []).filter((name) => !allowedTools.includes(name));
        const written = withLimits(
          listsToSave(catalog, new Set(allowedTools), new Set(askTools), conditionsOf(policy)),
          policy.limits ?? {},
        );
        // Conditions and limits are kept for the tools kept; none at all is no field, as in the file.
        if (Object.keys(written.conditions ?? {}).length === 0) delete written.conditions;
        const { limits, ...unlimited } = written;
        return Object.keys(limits).length === 0 ? unlimited : written;
      };
      if (source.projectDefault !== undefined) document.projectDefault = lists(source.projectDefault);
      document.agents = (source.agents ?? []).map((agent) => ({ agentId: agent.agentId, policy: lists(agent.policy) }));
      repair = { kind, document, dropped: [...dropped] };
    }
    this.store.update((state) => {
      state.repair = repair;
      state.focusAfterRender = 'repair-confirm';
    });
  }

  cancelRepair(): void {
    const kind = this.state.repair?.kind ?? 'read-only';
    this.store.update((state) => {
      state.repair = null;
      state.focusAfterRender = `repair-${kind}`;
    });
  }

  /** Writes the chosen document over the invalid file, guarded by the invalid file's revision. */
  async confirmRepair(): Promise<void> {
    const state = this.state;
    const { repair, projectId, revision } = state;
    if (repair === null || projectId === null || revision === null || state.token === null || state.saving) return;
    await this.write(async () => {
      let result: VersionedView;
      try {
        result = await this.api.putDocument(projectId, repair.document, revision);
      } catch (error) {
        if (asApiError(error).code !== 'revision_mismatch') throw error;
        // Never replace a file the user has not seen: show the newer state instead.
        const fresh = await this.api.permissions(projectId);
        this.store.stage((next) => {
          adoptView(next, fresh);
          next.repair = null;
        });
        throw new Touched();
      }
      this.store.stage((next) => {
        next.repair = null;
        adoptView(next, result);
        next.focusAfterRender = 'editor-title';
        this.notify(
          next,
          repair.kind === 'read-only'
            ? 'Policy réparée : tout le projet est en lecture seule.'
            : 'Policy réparée : dernier document valide restauré.',
          4000,
        );
      });
    }, this.touchedProblem('Le fichier a changé pendant la réparation : rien n\u2019a été écrit. Vérifiez son état actuel.'));
  }
}

/** Reads and moves the basis a write expects to find (a draft's, or a reset's). */
interface Expected {
  get(): TargetBasis;
  set(basis: TargetBasis): void;
}
