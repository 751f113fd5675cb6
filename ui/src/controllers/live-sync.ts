/**
 * What the panel does with the live events: an `approval` event goes to `hooks.approval`; a
 * `policy` event that tells something the panel does not show yet (another revision of the open
 * project, a project added, removed, broken or repaired) calls `hooks.reload`, which keeps a
 * draft. Events are gathered for a moment so a burst (a whole state on reconnection) costs one
 * reload, and never acted on while a load or a write is in flight ({@link LiveSync.settled}, a
 * store listener, acts on them afterwards).
 */
import type { ApprovalEvent, PolicyEvent } from '../../../schemas/events.js';
import { LiveStream, type LiveState } from '../api/live-stream.js';
import type { SseMessage } from '../../../schemas/server-sent-events.js';
import type { Store } from '../state/store.js';

/** Events of a burst arrive within a few milliseconds; one reload answers all of them. */
const GATHER_MS = 40;

/** What the panel shows now, as far as the policy events are concerned. */
export interface ShownPolicy {
  projectId: string | null;
  revision: string | null;
  status: 'ok' | 'invalid' | null;
  projects: readonly { id: string; status: string }[];
}

/** True when one of `events` says something `shown` does not reflect. */
export function eventsNeedReload(shown: ShownPolicy, events: readonly PolicyEvent[]): boolean {
  for (const event of events) {
    const known = shown.projects.find((project) => project.id === event.project);
    if (event.status === 'removed') {
      if (known !== undefined) return true;
      continue;
    }
    if (known?.status !== event.status) return true;
    if (event.project === shown.projectId && (event.revision !== shown.revision || event.status !== shown.status)) return true;
  }
  return false;
}

/** Parses the data of a `policy` event; anything else is ignored (an older or newer service). */
export function policyEventOf(data: string): PolicyEvent | null {
  try {
    const value = JSON.parse(data) as Partial<PolicyEvent>;
    const statuses: readonly unknown[] = ['ok', 'invalid', 'removed'];
    if (typeof value.project !== 'string' || typeof value.revision !== 'string' || !statuses.includes(value.status)) return null;
    return { project: value.project, revision: value.revision, status: value.status as PolicyEvent['status'] };
  } catch {
    return null;
  }
}

/** Parses the data of an `approval` event, or null. */
export function approvalEventOf(data: string): ApprovalEvent | null {
  try {
    const value = JSON.parse(data) as Partial<ApprovalEvent>;
    if (typeof value.project !== 'string' || typeof value.id !== 'string' || typeof value.status !== 'string') return null;
    return { project: value.project, id: value.id, status: value.status };
  } catch {
    return null;
  }
}

/** What the composition root does on the stream's news. */
export interface LiveHooks {
  /** Something the panel shows changed: read the view again (a draft is kept). */
  reload(): void;
  approval(event: ApprovalEvent): void;
  /** A connection opened (its first frames carry no approval state: read the lists). */
  opened(): void;
}

export class LiveSync {
  private stream: LiveStream | null = null;
  private hooks: LiveHooks | null = null;
  private pending: PolicyEvent[] = [];
  /** The stream was down for a while: reload once even if no event says what changed (a removal). */
  private resync = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: Store,
    private readonly url: string,
  ) {}

  /** Connects unless already connected (or connecting). */
  start(hooks: LiveHooks): void {
    this.hooks = hooks;
    if (this.store.state.live === 'stopped') this.connection().restart();
  }

  /** The token changed: reconnect with it at once. */
  restart(): void {
    this.connection().restart();
  }

  /** A store listener: once no load or write is in flight, act on what arrived meanwhile. */
  settled(): void {
    const { loading, saving } = this.store.state;
    if (!loading && !saving && (this.pending.length > 0 || this.resync)) this.schedule();
  }

  private connection(): LiveStream {
    this.stream ??= new LiveStream({
      url: this.url,
      token: () => this.store.state.token,
      onOpen: (reconnection) => {
        // The connection's first frames describe every project: older events are superseded.
        this.pending = [];
        if (reconnection) this.resync = true;
        this.schedule();
        if (this.store.state.projectId !== null) this.hooks?.opened();
      },
      onMessage: (message) => {
        this.onMessage(message);
      },
      onState: (state) => {
        this.onState(state);
      },
    });
    return this.stream;
  }

  private onState(state: LiveState): void {
    if (this.store.state.live === state) return;
    this.store.update((next) => {
      next.live = state;
    });
  }

  private onMessage(message: SseMessage): void {
    if (message.event === 'approval') {
      const event = approvalEventOf(message.data);
      if (event !== null) this.hooks?.approval(event);
      return;
    }
    if (message.event !== 'policy') return;
    const event = policyEventOf(message.data);
    if (event === null) return;
    this.pending.push(event);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.sync();
    }, GATHER_MS);
  }

  private sync(): void {
    const state = this.store.state;
    if (state.loading || state.saving) return; // settled() comes back here
    // Only the latest state of each project counts (an older one would look like a change).
    const latest = new Map(this.pending.map((event) => [event.project, event]));
    const events = [...latest.values()];
    this.pending = [];
    const shown: ShownPolicy = {
      projectId: state.projectId,
      revision: state.revision,
      status: state.view?.status ?? null,
      projects: state.projects,
    };
    if (this.resync || eventsNeedReload(shown, events)) {
      this.resync = false;
      this.hooks?.reload();
    }
  }
}
