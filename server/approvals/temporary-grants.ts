/**
 * Temporary grants (docs/api.md#approvals-and-temporary-grants): "let this agent call these tools for the next N seconds". Held
 * in memory per project, saved through `persist` after every change so they survive a restart;
 * `has` sits on the decision path and is a lookup in nested Maps.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { MAX_GRANT_TTL_SECONDS, type Grant } from '../../schemas/approvals.js';
import { isToolName } from '../../schemas/catalog.js';
import { isQualifiedToolName } from '../../schemas/servers.js';
import { IDEA_CATALOG, sortInCatalogOrder, type ProjectCatalog } from '../domain/project-catalog.js';
import { PROJECT_ID_REGEX } from '../../schemas/policy.js';
import { isAgentRequester } from '../../schemas/requester.js';
import { leftByBoot, persistedOffset, restoredExpiry, wallOffsetOf, type RestartBounds, type ServiceClock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Projects } from '../projects/projects.js';
import type { PersistedGrant } from './state-file.js';
import type { PolicyConditions } from '../../schemas/conditions.js';
import { checkArguments, type ToolChecks } from '../domain/conditions.js';
import type { GrantVerdict } from '../domain/decide.js';
import { NO_GRANT_CONDITIONS, grantConditions, savedGrantConditions, type GrantConditions } from '../domain/grant-conditions.js';

/** Live grants per project; a project past this must revoke or wait for some to expire. */
export const MAX_GRANTS_PER_PROJECT = 1_000;
/** How many problems of a state file are listed one by one before they are only counted. */
const MAX_RESTORE_WARNINGS = 20;

interface GrantRecord {
  readonly id: string;
  readonly project: string;
  readonly requester: string;
  readonly tools: readonly string[];
  /** Monotonic times (clock.ts). */
  readonly createdAt: number;
  readonly expiresAt: number;
  /** Wall minus monotonic time when it was made: its times are shown as they were given. */
  readonly wallOffset: number;
  /** The project folder it was made for ('' when unknown: it then matches no folder). */
  readonly folder: string;
  /** The conditions its tools had when it was made: it never allows a call outside them. */
  readonly conditions: GrantConditions;
}

/** One grant covering a tool, as a decision reads it. */
interface Cover {
  readonly expiresAt: number;
  /** The grant's conditions on this tool, if it has some. */
  readonly checks: ToolChecks | undefined;
}

const NO_GRANT: GrantVerdict = { kind: 'none' };
const GRANTED: GrantVerdict = { kind: 'ok' };

export interface TemporaryGrantsOptions {
  /** Saves the durable state (it reads {@link TemporaryGrants.persisted}); throws when it cannot. */
  readonly persist?: (() => void) | undefined;
  /** Where a failed save that no caller is waiting for (a project dropped) is logged. */
  readonly logger?: Logger | undefined;
  /** Turns the monotonic `now` of every call into wall times; without it they are the same. */
  readonly clock?: ServiceClock;
  /**
   * What a new grant reads of its project now: its folder's identity (stamped on it), the tools it
   * knows (default: IdeA's catalog), and the conditions its tools have (kept by it; default: none).
   */
  readonly projects?: Pick<Projects, 'folderOf' | 'catalogOf' | 'conditionsOf'> | undefined;
}

export class TemporaryGrants {
  /** project → grant id → grant. */
  private readonly byProject = new Map<string, Map<string, GrantRecord>>();
  /** project → requester → tool → the grants that cover it, latest end first: all `has` and `judge` read. */
  private readonly index = new Map<string, Map<string, Map<string, Cover[]>>>();

  constructor(private readonly options: TemporaryGrantsOptions = {}) {}

  /** Creates a grant once it is saved; throws an {@link ApiError} and changes nothing otherwise. */
  create(project: string, requester: string, tools: readonly string[], ttlSeconds: number, now: number): Grant {
    if (!isAgentRequester(requester)) {
      throw new ApiError('invalid_requester', `Only an agent can be granted tools, not ${JSON.stringify(requester)}.`);
    }
    const { projects } = this.options;
    const granted = checkTools(tools, projects?.catalogOf(project) ?? IDEA_CATALOG);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_GRANT_TTL_SECONDS) {
      throw new ApiError('invalid_ttl', `ttlSeconds must be an integer from 1 to ${MAX_GRANT_TTL_SECONDS}.`);
    }
    this.sweep(project, now);
    const grants = this.grantsOf(project);
    if (grants.size >= MAX_GRANTS_PER_PROJECT) {
      throw new ApiError('limit_exceeded', `Project ${project} already has ${MAX_GRANTS_PER_PROJECT} temporary grants.`);
    }
    const record: GrantRecord = {
      id: newId(grants),
      project,
      requester,
      tools: granted,
      createdAt: now,
      expiresAt: now + ttlSeconds * 1000,
      wallOffset: wallOffsetOf(this.options.clock),
      folder: projects?.folderOf(project) ?? '',
      conditions: grantConditions(this.conditionsOf(project, requester, granted)),
    };
    grants.set(record.id, record);
    this.reindex(project, requester);
    try {
      this.options.persist?.();
    } catch (error) {
      grants.delete(record.id);
      this.reindex(project, requester);
      throw new ApiError('write_failed', `The grant could not be saved (${(error as Error).message}); nothing was granted.`);
    }
    return toWire(record);
  }

  /** True while a live grant covers `requester` and `tool` in `project`, whatever its conditions (a decision asks {@link judge}). */
  has(project: string, requester: string, tool: string, now: number): boolean {
    const expiresAt = this.expiryOf(project, requester, tool);
    return expiresAt !== undefined && expiresAt > now;
  }

  /** When the latest grant covering `requester` and `tool` ends (ms), or undefined: lets a caller skip reading the clock. */
  expiryOf(project: string, requester: string, tool: string): number | undefined {
    return this.index.get(project)?.get(requester)?.get(tool)?.[0]?.expiresAt;
  }

  /**
   * Whether a live grant lets `requester` make this call of `tool`: `ok` when one covers it and its
   * conditions (if any) accept `args`, else the refusal of the first live one, else `none`. Reads
   * `now` only when one covers the tool, and drops the project's expired grants when one found is over.
   */
  judge(
    project: string,
    requester: string,
    tool: string,
    args: Readonly<Record<string, unknown>> | undefined,
    now: () => number,
  ): GrantVerdict {
    const covers = this.index.get(project)?.get(requester)?.get(tool);
    if (covers === undefined) return NO_GRANT;
    const at = now();
    let refusal: GrantVerdict = NO_GRANT;
    for (const cover of covers) {
      if (cover.expiresAt <= at) break;
      if (cover.checks === undefined) return GRANTED;
      const verdict = checkArguments(cover.checks, args);
      if (verdict.kind === 'ok') return GRANTED;
      if (refusal.kind === 'none') refusal = verdict;
    }
    if (covers.some((cover) => cover.expiresAt <= at)) this.expire(at, project);
    return refusal;
  }

  /**
   * Forgets the expired grants (of one project, or of all) and saves the state without them, so
   * that neither the lookup nor the file keeps them until a list, create or revoke.
   */
  expire(now: number, project?: string): void {
    let dropped = false;
    for (const id of project === undefined ? [...this.byProject.keys()] : [project]) dropped = this.sweep(id, now).dropped || dropped;
    if (dropped) this.saveAfterDrop();
  }

  /** The live grants of a project, newest first. */
  list(project: string, now: number): Grant[] {
    return [...this.sweep(project, now).grants.values()].reverse().map(toWire);
  }

  /**
   * Ends a live grant at once. A revocation is never undone: when it cannot be saved it still holds
   * until a restart, and the error says so.
   */
  revoke(project: string, id: string, now: number): Grant {
    const { grants } = this.sweep(project, now);
    const record = grants.get(id);
    if (record === undefined) throw new ApiError('not_found', `No live temporary grant ${JSON.stringify(id)} in project ${project}.`);
    grants.delete(id);
    this.reindex(project, record.requester);
    try {
      this.options.persist?.();
    } catch (error) {
      throw new ApiError(
        'write_failed',
        `The grant was revoked but the change could not be saved (${(error as Error).message}): after a restart it would allow again until ${toWire(record).expiresAt}.`,
      );
    }
    return toWire(record);
  }

  /** Forgets the grants for which `drop(project, folder)` is true (their folder is gone or another), saving if any were. */
  dropWhere(drop: (project: string, folder: string) => boolean): void {
    let dropped = false;
    for (const [project, grants] of this.byProject) {
      const touched = new Set<string>();
      for (const [id, record] of grants) {
        if (!drop(project, record.folder)) continue;
        grants.delete(id);
        touched.add(record.requester);
      }
      for (const requester of touched) this.reindex(project, requester);
      dropped ||= touched.size > 0;
    }
    if (dropped) this.saveAfterDrop();
  }

  /** Forgets a project's grants (the project disappeared). */
  dropProject(project: string): void {
    if (!this.byProject.delete(project)) return;
    this.index.delete(project);
    this.saveAfterDrop();
  }

  /** The conditions `tools` have for `requester` now, which the grant keeps; the project's invalid policy grants nothing. */
  private conditionsOf(project: string, requester: string, tools: readonly string[]): PolicyConditions {
    const { projects } = this.options;
    if (projects === undefined) return {};
    const conditions = projects.conditionsOf(project, requester, tools);
    if (conditions === undefined) {
      throw new ApiError(
        'policy_invalid',
        `The policy file of project ${project} is invalid: a grant keeps the conditions its tools have now, which cannot be read; nothing was granted.`,
      );
    }
    return conditions;
  }

  /** Saves after grants were dropped; a failed save is logged, never undone in memory (a dropped grant never allows again). */
  private saveAfterDrop(): void {
    try {
      this.options.persist?.();
    } catch (error) {
      this.options.logger?.error({ err: error }, 'approvals state not saved');
    }
  }

  /**
   * The live grants of every project as the state file keeps them: absolute times, as the wall clock
   * reads them now, and each end on the boot clock when `bootExpiry` turns a monotonic time into it.
   */
  persisted(now: number, bootExpiry?: (expiresAt: number) => number): PersistedGrant[] {
    const wallOffset = wallOffsetOf(this.options.clock);
    const entries: PersistedGrant[] = [];
    for (const grants of this.byProject.values()) {
      for (const record of grants.values()) {
        if (record.expiresAt > now) {
          const entry: PersistedGrant = {
            ...toWire({ ...record, wallOffset: persistedOffset(record.wallOffset, wallOffset) }),
            folder: record.folder,
          };
          if (bootExpiry !== undefined) entry.expiresAtBootMs = bootExpiry(record.expiresAt);
          entries.push(entry);
        }
      }
    }
    return entries;
  }

  /**
   * Takes back the grants of a state file, keeping only what {@link create} could have made: an
   * expired grant is dropped, a name outside the catalog never grants; returns what was dropped.
   */
  restore(entries: readonly PersistedGrant[], now: number, bounds?: RestartBounds): string[] {
    const problems: string[] = [];
    for (const entry of entries) {
      const problem = this.restoreOne(entry, now, bounds);
      if (problem !== undefined) problems.push(problem);
    }
    const warnings = problems.slice(0, MAX_RESTORE_WARNINGS);
    if (problems.length > MAX_RESTORE_WARNINGS) warnings.push(`${problems.length - MAX_RESTORE_WARNINGS} more grants were dropped.`);
    return warnings;
  }

  private restoreOne(entry: PersistedGrant, now: number, bounds: RestartBounds | undefined): string | undefined {
    const wallOffset = wallOffsetOf(this.options.clock);
    const wallNow = now + wallOffset;
    const where = `Saved grant ${JSON.stringify(entry.id).slice(0, 80)}`;
    const createdAt = Date.parse(entry.createdAt);
    const expiresAt = Date.parse(entry.expiresAt);
    if (!PROJECT_ID_REGEX.test(entry.project)) return `${where} dropped: invalid project id.`;
    if (!isAgentRequester(entry.requester)) return `${where} dropped: its requester is not an agent.`;
    if (entry.id === '' || entry.id.length > 64 || this.byProject.get(entry.project)?.has(entry.id))
      return `${where} dropped: invalid or repeated id.`;
    if (!Number.isFinite(createdAt) || !Number.isFinite(expiresAt)) return `${where} dropped: invalid times.`;
    const left = bounds === undefined ? Number.POSITIVE_INFINITY : leftByBoot(bounds, expiresAt, entry.expiresAtBootMs);
    const endsAt = restoredExpiry(expiresAt, Math.min(expiresAt - createdAt, left), now, wallNow);
    if (endsAt === undefined) return undefined;
    if (expiresAt - wallNow > MAX_GRANT_TTL_SECONDS * 1000) return `${where} dropped: it expires later than a grant can last.`;
    // A declared tool's grant is kept by its form: it allows only while the project's catalog declares it (decide.ts).
    const tools = [...new Set(entry.tools.filter(savedToolName))];
    if (tools.length === 0) return `${where} dropped: none of its tools is in the catalog.`;
    // Conditions it cannot be trusted to keep make it grant nothing, like a corrupt file.
    const conditions = savedGrantConditions(entry.conditions, tools);
    if (typeof conditions === 'string') return `${where} dropped: ${conditions}.`;
    const grants = this.grantsOf(entry.project);
    grants.set(entry.id, {
      id: entry.id,
      project: entry.project,
      requester: entry.requester,
      tools,
      createdAt: createdAt - wallOffset,
      expiresAt: endsAt,
      wallOffset,
      folder: entry.folder ?? '',
      conditions,
    });
    this.reindex(entry.project, entry.requester);
    const unknown = entry.tools.filter((tool) => !savedToolName(tool));
    return unknown.length === 0 ? undefined : `${where}: names outside the catalog ignored: ${unknown.slice(0, 5).join(', ')}.`;
  }

  private grantsOf(project: string): Map<string, GrantRecord> {
    let grants = this.byProject.get(project);
    if (grants === undefined) {
      grants = new Map();
      this.byProject.set(project, grants);
    }
    return grants;
  }

  /** The project's grants without the expired ones, and the index without them; `dropped` when some were. */
  private sweep(project: string, now: number): { grants: Map<string, GrantRecord>; dropped: boolean } {
    const grants = this.byProject.get(project);
    if (grants === undefined) return { grants: new Map(), dropped: false };
    const touched = new Set<string>();
    for (const [id, record] of grants) {
      if (record.expiresAt > now) continue;
      grants.delete(id);
      touched.add(record.requester);
    }
    for (const requester of touched) this.reindex(project, requester);
    if (grants.size === 0) {
      this.byProject.delete(project);
      this.index.delete(project);
    }
    return { grants, dropped: touched.size > 0 };
  }

  /** Rebuilds what `has` and `judge` read for one requester of one project from its grants. */
  private reindex(project: string, requester: string): void {
    const byTool = new Map<string, Cover[]>();
    for (const record of this.byProject.get(project)?.values() ?? []) {
      if (record.requester !== requester) continue;
      for (const tool of record.tools) {
        const cover: Cover = { expiresAt: record.expiresAt, checks: record.conditions.checks.get(tool) };
        const covers = byTool.get(tool);
        if (covers === undefined) byTool.set(tool, [cover]);
        else covers.push(cover);
      }
    }
    for (const covers of byTool.values()) covers.sort((a, b) => b.expiresAt - a.expiresAt);
    let byRequester = this.index.get(project);
    if (byRequester === undefined) {
      byRequester = new Map();
      this.index.set(project, byRequester);
    }
    if (byTool.size === 0) byRequester.delete(requester);
    else byRequester.set(requester, byTool);
  }
}

/** The tools of a grant in catalog order; anything else than distinct catalog names is refused whole. */
function checkTools(tools: readonly string[], catalog: ProjectCatalog): string[] {
  const seen = new Set<string>();
  const unknown: string[] = [];
  const duplicates: string[] = [];
  let empty = 0;
  for (const tool of tools) {
    if (tool === '') empty += 1;
    else if (seen.has(tool)) duplicates.push(tool);
    else if (catalog.find(tool) === undefined) unknown.push(tool);
    seen.add(tool);
  }
  if (tools.length === 0 || unknown.length > 0 || duplicates.length > 0 || empty > 0) {
    const problem = tools.length === 0 ? 'A grant needs at least one tool.' : 'A grant may only name distinct catalog tools.';
    throw new ApiError('invalid_tools', problem, { unknown, duplicates, empty });
  }
  return sortInCatalogOrder(catalog, tools);
}

const savedToolName = (tool: string): boolean => isToolName(tool) || isQualifiedToolName(tool);

function newId(taken: ReadonlyMap<string, unknown>): string {
  let id: string;
  do id = randomBytes(9).toString('base64url');
  while (taken.has(id));
  return id;
}

function toWire(record: GrantRecord): Grant {
  const grant: Grant = {
    id: record.id,
    project: record.project,
    requester: record.requester,
    tools: [...record.tools],
    createdAt: new Date(Math.round(record.createdAt + record.wallOffset)).toISOString(),
    expiresAt: new Date(Math.round(record.expiresAt + record.wallOffset)).toISOString(),
  };
  // Only a grant that has some: one made on an unconditioned tool reads as before.
  if (record.conditions !== NO_GRANT_CONDITIONS) grant.conditions = record.conditions.written;
  return grant;
}
