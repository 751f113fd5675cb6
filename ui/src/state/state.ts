/** The panel's state: everything the views read. Only the controllers change it, through the store. */
import type { Approval, CatalogResponse, Grant, PolicyDocument, ProjectsResponse, RecentDecision } from '../../../schemas/index.js';
import type { ApiError, PanelView, Role } from '../api/api.js';
import type { ConditionRows } from '../model/conditions-model.js';
import type { ConflictSides, TargetBasis } from '../model/draft-rebase.js';
import type { FrenchError } from '../model/errors-fr.js';
import type { LimitRows } from '../model/limits-model.js';
import type { LiveState } from '../api/live-stream.js';
import { DEFAULT_TARGET, type TargetKey, type WriteLists } from '../model/model.js';
import type { PreviewLine } from '../model/preview-model.js';
import { emptyServers, type ServersPanel } from '../model/servers-model.js';

export type Tab = 'mcp' | 'system';

/** The "Demandes" tab: pending approval requests and temporary grants of the open project (docs/api.md#approvals-and-temporary-grants). */
export interface RequestsState {
  /** The lists have been read once for the open project. */
  loaded: boolean;
  pending: Approval[];
  grants: Grant[];
  loadError: FrenchError | null;
  /** The service has no approval routes (an older service). */
  unsupported: boolean;
  /** The request or grant being answered or revoked. */
  busy: string | null;
  /** The request whose "Autoriser pendant…" durations are shown. */
  durationsFor: string | null;
  /** The last answer's problem, shown above the list. */
  problem: FrenchError | null;
  /** What the last answer did, shown above the list; a refusal is said in the error style. */
  notice: { text: string; refusal: boolean; requester: string } | null;
  /** Other projects with requests seen pending in the live events (project → request ids). */
  elsewhere: Map<string, Set<string>>;
}

/** "Refus récents": the recent denials of the open project (`GET /projects/:p/decisions?allow=false`). */
export interface DenialsState {
  /** The list has been read once for the open project. */
  loaded: boolean;
  /** Newest first, at most the last {@link DENIALS_LIMIT}. */
  decisions: RecentDecision[];
  loadError: FrenchError | null;
}

/** The ring keeps at least 1,000 decisions per project; the panel shows the last 50 denials. */
export const DENIALS_LIMIT = 50;

/**
 * What a draft would have changed among recent calls (`POST .../preview`, docs/api.md#policy-as-code-idea-pdp-and-previews), said
 * in the save bar before Enregistrer. Null while no draft differs from the saved policy.
 */
export interface DraftPreview {
  /** The sentences of the latest answer (empty until the first one). */
  lines: PreviewLine[];
  /** The preview failed: one quiet line (saving still works). */
  error: string | null;
  /** A newer draft is being previewed: the lines shown are those of an earlier one. */
  pending: boolean;
}

/** Unsaved changes of one target. */
export interface Draft {
  target: TargetKey;
  allowed: Set<string>;
  /** Tools on ask (never also in `allowed`). */
  ask: Set<string>;
  /** Conditions on arguments by tool, as the inline editor holds them (a row may be incomplete). */
  conditions: ConditionRows;
  /** Usage limits by tool, as the row's editor holds them (a row may be invalid while typed). */
  limits: LimitRows;
  /** The agent inherits today: saving creates its override even if nothing else changed. */
  createsOverride: boolean;
  /** The user asked to drop the unknown names of the saved allowlist. */
  dropsUnknown: boolean;
  /** What the draft started from: a newer view that changes it is a conflict, otherwise the draft is re-applied. */
  base: TargetBasis;
}

/** Write tools the user enabled on the project default, waiting for the inline confirmation. */
export interface WriteConfirmation {
  groupId: string;
  tools: string[];
}

export interface Problem extends FrenchError {
  kind: 'auth' | 'invalid' | 'error';
}

/** The draft's target changed elsewhere: both sides are shown and the user chooses. */
export interface Conflict {
  target: TargetKey;
  sides: ConflictSides;
  /** The basis of the newer view (the draft's new base if the user keeps their version). */
  after: TargetBasis;
  /** The conflict came from a save: keeping one's version saves at once. */
  fromSave: boolean;
}

/** A reset that can be taken back for a few seconds by writing the previous allowlist again. */
export interface Undo {
  target: TargetKey;
  message: string;
  previous: WriteLists;
  /** The revision the reset produced: the undo is sent with it in `If-Match`. */
  revision: string;
  after: TargetBasis;
  until: number;
}

/** A repair of an invalid file the user is about to confirm. */
export interface RepairChoice {
  kind: 'read-only' | 'last-valid';
  document: PolicyDocument;
  /** Names outside the catalog left out of a restored document (the API refuses them). */
  dropped: string[];
}

/** A short confirmation shown where the user acted ("Permissions enregistrées"). */
export interface Notice {
  text: string;
  until: number;
}

export interface TokenForm {
  open: boolean;
  reason: string | null;
  checking: boolean;
  error: FrenchError | null;
}

export interface PanelState {
  tab: Tab;
  /** The approval requests and temporary grants are shown in the right column (header button). */
  requestsOpen: boolean;
  /** Successful loads so far: a new one tells the request and denial lists to read again. */
  loadCount: number;
  token: string | null;
  /** The role the service gave the token (`GET /whoami`); null until checked. */
  role: Role | null;
  tokenForm: TokenForm;
  catalog: CatalogResponse | null;
  projects: ProjectsResponse['projects'];
  projectId: string | null;
  view: PanelView | null;
  revision: string | null;
  loading: boolean;
  loadError: ApiError | null;
  target: TargetKey;
  draft: Draft | null;
  confirmation: WriteConfirmation | null;
  /** A target/project change waiting for the user to abandon the draft. */
  pendingSwitch: { message: string; proceed: () => void } | null;
  saving: boolean;
  problem: Problem | null;
  conflict: Conflict | null;
  notice: Notice | null;
  undo: Undo | null;
  repair: RepairChoice | null;
  /** Explicit open/closed choices per target and group (defaults come from the group's access). */
  openGroups: Map<string, boolean>;
  /** The tool whose « Conditions » editor (which holds its usage limit too) is open, for one target (by {@link targetId}). */
  conditionsOpen: { target: string; tool: string; message: { index: number; text: string } | null } | null;
  /** The group whose "Autres actions" ("Tout demander dans ce groupe") is shown. */
  moreActionsFor: string | null;
  /** Which item of each group's toolbar holds the Tab stop (0: the group button). */
  toolbarFocus: Map<string, number>;
  /** Element to focus after the next render, when the action removed or moved the focused element. */
  focusAfterRender: string | null;
  /** The connection to the live events (`GET /events`). */
  live: LiveState;
  /** The policy changed elsewhere while a draft was open and the draft was kept: said beside the actions. */
  drift: string | null;
  /** Something the live events changed that the user did not do (a project gone), said at the top. */
  liveNotice: string | null;
  requests: RequestsState;
  denials: DenialsState;
  /** Other MCP servers: their tools listed undeclared (« Tools inconnus ») and the « Déclarer » form. */
  servers: ServersPanel;
  /** The save bar's summary of what the draft would change among recent calls (see {@link DraftPreview}). */
  draftPreview: DraftPreview | null;
  /** Text for the page's polite live region (`role="status"`), outside the re-rendered tree. */
  announcement: string;
}

export function initialState(token: string | null): PanelState {
  return {
    tab: 'mcp',
    requestsOpen: false,
    loadCount: 0,
    token,
    role: null,
    tokenForm: { open: false, reason: null, checking: false, error: null },
    catalog: null,
    projects: [],
    projectId: null,
    view: null,
    revision: null,
    loading: true,
    loadError: null,
    target: DEFAULT_TARGET,
    draft: null,
    confirmation: null,
    pendingSwitch: null,
    saving: false,
    problem: null,
    conflict: null,
    notice: null,
    undo: null,
    repair: null,
    openGroups: new Map(),
    conditionsOpen: null,
    moreActionsFor: null,
    toolbarFocus: new Map(),
    focusAfterRender: null,
    live: 'stopped',
    drift: null,
    liveNotice: null,
    requests: emptyRequests(),
    denials: emptyDenials(),
    servers: emptyServers(),
    draftPreview: null,
    announcement: '',
  };
}

export function emptyRequests(elsewhere = new Map<string, Set<string>>()): RequestsState {
  return {
    loaded: false,
    pending: [],
    grants: [],
    loadError: null,
    unsupported: false,
    busy: null,
    durationsFor: null,
    problem: null,
    notice: null,
    elsewhere,
  };
}

export function emptyDenials(): DenialsState {
  return { loaded: false, decisions: [], loadError: null };
}

/** Drops everything tied to the draft of the selected target. */
export function clearEditing(state: PanelState): void {
  state.draft = null;
  state.confirmation = null;
  state.problem = null;
  state.pendingSwitch = null;
  state.conflict = null;
  state.repair = null;
  state.undo = null;
  state.drift = null;
  state.draftPreview = null;
}

/** Opens the token form with a reason, focus in its field. */
export function openTokenForm(state: PanelState, reason: string | null = null): void {
  state.tokenForm = { open: true, reason, checking: false, error: null };
  state.focusAfterRender = 'token-input';
}
