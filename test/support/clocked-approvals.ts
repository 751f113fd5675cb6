/**
 * Shared set-up of the approvals tests: an injected clock and the real service with its real classes
 * (temp folders: test/support/temp-folder.ts).
 */
import pino, { type Logger } from 'pino';
import { afterEach } from 'vitest';
import type { ApprovalEvent } from '../../schemas/events.js';
import { ApprovalsService, type ApprovalsProjects, type ApprovalsServiceOptions } from '../../server/approvals/approvals-service.js';
import { IDEA_CATALOG } from '../../server/domain/project-catalog.js';

const opened: ApprovalsService[] = [];
afterEach(() => {
  for (const service of opened.splice(0)) service.close();
});

/** A clock the test moves by hand, starting at a fixed time. */
export class TestClock {
  now = Date.parse('2026-03-01T10:00:00.000Z');
  /** How far the wall clock is behind (a wall clock set back); the monotonic time is `now`. */
  wallBehind = 0;
  readonly read = (): number => this.now;
  readonly monotonic = (): number => this.now;
  readonly wall = (): number => this.now - this.wallBehind;
  advance(ms: number): number {
    this.now += ms;
    return this.now;
  }
}

/** Projects that all exist, ask for every tool, declare every requester, know IdeA's catalog and condition nothing. */
export const EVERY_PROJECT: ApprovalsProjects = {
  has: () => true,
  folderOf: () => undefined,
  catalogOf: () => IDEA_CATALOG,
  conditionsOf: () => ({}),
  isOnAsk: () => true,
  isDeclared: () => true,
  freshly: <T>(_project: string, task: () => T) => Promise.resolve(task()),
};

export interface Harness {
  readonly service: ApprovalsService;
  readonly requests: ApprovalsService['requests'];
  readonly grants: ApprovalsService['grants'];
  readonly onces: ApprovalsService['onces'];
  readonly warnings: readonly string[];
  close(): void;
  readonly clock: TestClock;
  readonly changes: ApprovalEvent[];
  readonly alwaysCalls: [string, string, string][];
}

/** The approvals service on {@link EVERY_PROJECT}, with the test's clock, its changes recorded and `always` answers written at once. */
export function open(options: Partial<ApprovalsServiceOptions> = {}, clock = new TestClock()): Harness {
  const changes: ApprovalEvent[] = [];
  const alwaysCalls: [string, string, string][] = [];
  const service = new ApprovalsService({
    projects: EVERY_PROJECT,
    always: {
      allowAlways: (project, requester, tool) => {
        alwaysCalls.push([project, requester, tool]);
        return Promise.resolve();
      },
    },
    events: { approvalChanged: (change) => changes.push(change) },
    logger: pino({ enabled: false }),
    clock,
    ...options,
  });
  opened.push(service);
  const { requests, grants, onces, warnings } = service;
  return {
    service,
    requests,
    grants,
    onces,
    warnings,
    close: () => {
      service.close();
    },
    clock,
    changes,
    alwaysCalls,
  };
}

/** A logger that keeps the error of every line it writes: the saves that failed with no caller to tell. */
export function failureLogger(failures: Error[]): Logger {
  return pino(
    { level: 'error' },
    {
      write: (line: string) => {
        const { err } = JSON.parse(line) as { err?: Error };
        if (err !== undefined) failures.push(err);
      },
    },
  );
}
