/** Shared set-up of the approvals tests: an injected clock and the real classes (temp folders: test/support/temp-folder.ts). */
import { afterEach } from 'vitest';
import { openApprovals, type Approvals, type OpenApprovalsOptions } from '../../server/approvals/open-approvals.js';
import type { ApprovalChange } from '../../server/approvals/approval-requests.js';

const opened: Approvals[] = [];
afterEach(() => {
  for (const approvals of opened.splice(0)) approvals.close();
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

export interface Harness extends Approvals {
  readonly clock: TestClock;
  readonly changes: ApprovalChange[];
  readonly alwaysCalls: [string, string, string][];
}

/** The approvals of a service, with the test's clock, its changes recorded and `always` answers succeeding. */
export function open(options: Partial<OpenApprovalsOptions> = {}, clock = new TestClock()): Harness {
  const changes: ApprovalChange[] = [];
  const alwaysCalls: [string, string, string][] = [];
  const approvals = openApprovals({
    clock,
    onChange: (change) => changes.push(change),
    makeAlways: (project, requester, tool) => {
      alwaysCalls.push([project, requester, tool]);
      return Promise.resolve();
    },
    ...options,
  });
  opened.push(approvals);
  return Object.assign(approvals, { clock, changes, alwaysCalls });
}
