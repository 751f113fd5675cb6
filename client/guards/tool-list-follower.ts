/**
 * Keeps an MCP host's cached `tools/list` right (docs/api.md#the-client-sdk,
 * docs/api.md#live-changes-get-events): with `filterToolsList`, the MCP guard follows the service's
 * events and sends `notifications/tools/list_changed` whenever what it would list for a requester
 * it has listed changes, in either direction: a policy change, the service becoming unreachable (a
 * list answered now is empty, fail closed) and reachable again.
 */
import { errorText } from '../causes.js';
import type { EventSubscription } from '../events/event-stream.js';
import type { EffectivePolicy } from '../../schemas/api.js';
import type { GuardClient, GuardLogger } from './common.js';

/** What the follower needs from the guard: its live options and a way to notify the host. */
export interface FollowedGuard {
  readonly options: {
    readonly client: GuardClient;
    readonly project: unknown;
    readonly filterToolsList?: boolean | undefined;
    readonly logger?: GuardLogger | undefined;
  };
  sendToolListChanged(): Promise<void>;
}

/** A listed requester's tools as the host last saw them; `null` when the lookup failed (an empty list). */
type Listed = string | null;

const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 30_000;

export class ToolListFollower {
  /** project → requester → the tools the host was last told about. */
  private readonly listed = new Map<string, Map<string, Listed>>();
  private subscription: EventSubscription | undefined;
  private connected = false;
  /** The event stream was down (or never up) since the last notification. */
  private outage = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;

  constructor(private readonly guard: FollowedGuard) {}

  /** Starts following, or stops, as the guard's current options say. */
  restart(): void {
    this.stop();
    const { client, filterToolsList, project } = this.guard.options;
    if (filterToolsList !== true || client.watchEvents === undefined) return;
    this.subscription = client.watchEvents({
      // A project chosen per request: follow them all; only the listed ones are looked up.
      project: typeof project === 'string' ? project : undefined,
      onConnect: () => {
        this.onConnect();
      },
      onDisconnect: (cause) => {
        this.connected = false;
        if (this.outage) return;
        // Said once per outage: the stream is retried every few seconds until it is back.
        this.guard.options.logger?.warn({ cause }, 'tools/list follower: service events unavailable, retrying');
        this.outage = true;
        this.forgetListed();
      },
      onPolicy: (event) => void this.refresh(event.project),
      // An answer `always` changes the policy, and an answer `for` what the requester may call.
      onApproval: (event) => {
        if (event.status !== 'pending') void this.refresh(event.project);
      },
    });
  }

  stop(): void {
    this.subscription?.close();
    this.subscription = undefined;
    this.connected = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Records what a `tools/list` answered (`null`: the lookup failed and nothing was listed). */
  noteListed(project: string, requester: string, tools: readonly string[] | null): void {
    let requesters = this.listed.get(project);
    if (requesters === undefined) {
      requesters = new Map();
      this.listed.set(project, requesters);
    }
    requesters.set(requester, tools === null ? null : key(tools));
    if (tools === null) this.scheduleRetry();
  }

  /**
   * The stream is open. After an outage the host is told once, and what it was told is forgotten:
   * it lists again, which records the lists afresh (and the policy events that follow the opening
   * find nothing to compare, so they do not notify a second time).
   */
  private onConnect(): void {
    this.connected = true;
    if (!this.outage) return;
    this.outage = false;
    this.listed.clear();
    void this.guard.sendToolListChanged();
  }

  /**
   * The service is out of reach: a `tools/list` now answers nothing, so a host that cached a
   * non-empty list is told to list again rather than show tools it can no longer call.
   */
  private forgetListed(): void {
    let hadTools = false;
    for (const requesters of this.listed.values()) {
      for (const [requester, tools] of requesters) {
        if (tools !== null) hadTools = true;
        requesters.set(requester, null);
      }
    }
    if (hadTools) void this.guard.sendToolListChanged();
  }

  /** Looks up the listed requesters of `project` again; tells the host if any list changed (or can no longer be known). */
  private async refresh(project: string): Promise<void> {
    const requesters = this.listed.get(project);
    if (requesters === undefined || requesters.size === 0) return;
    const { client, logger } = this.guard.options;
    let changed = false;
    let failed = false;
    await Promise.all(
      [...requesters].map(async ([requester, before]) => {
        try {
          const effective = await client.effective(project, requester, { timeoutMs: client.timeoutMs });
          const now = key(listedTools(effective));
          if (now === before) return;
          requesters.set(requester, now);
          changed = true;
        } catch (error) {
          failed = true;
          logger?.warn({ project, requester, cause: errorText(error) }, 'tools/list follower: effective policy unavailable');
          if (before === null) return;
          requesters.set(requester, null); // a tools/list answered now would be empty
          changed = true;
        }
      }),
    );
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the callbacks above, which TypeScript does not follow
    if (changed) await this.guard.sendToolListChanged();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- likewise
    if (failed) this.scheduleRetry();
  }

  /**
   * A lookup failed while the stream may be fine (a timeout, a restart too quick to drop it): look
   * again later, with a growing delay, rather than wait for the next event.
   */
  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.subscription === undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.connected) return; // the next opening of the stream tells the host
      const failing = [...this.listed].filter(([, requesters]) => [...requesters.values()].includes(null));
      if (failing.length === 0) {
        this.retryMs = FIRST_RETRY_MS;
        return;
      }
      for (const [project] of failing) void this.refresh(project);
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, LAST_RETRY_MS);
  }
}

/** What a filtered `tools/list` shows: the tools allowed and the tools on ask (which run once approved). */
export function listedTools(effective: Pick<EffectivePolicy, 'allowedTools' | 'askTools'>): string[] {
  return [...effective.allowedTools, ...(effective.askTools ?? [])];
}

function key(tools: readonly string[]): string {
  return [...tools].sort().join('\n');
}
