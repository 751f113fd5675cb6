/** Temporary grants (docs/api.md#approvals-and-temporary-grants): what they allow, for how long, and what they refuse. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/catalog.js';
import { parseRequester } from '../../schemas/requester.js';
import { ApiError } from '../../server/errors.js';
import { MAX_GRANTS_PER_PROJECT, TemporaryGrants } from '../../server/approvals/temporary-grants.js';
import { TestClock } from '../support/clocked-approvals.js';
import { stringMatching } from '../support/typed.js';

const names = TOOL_CATALOG.map((tool) => tool.name);
const HOUR = 3_600_000;

function codeOf(action: () => unknown): { code: string; details?: Record<string, unknown> } {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const { code, details } = error as ApiError;
    return details === undefined ? { code } : { code, details };
  }
  throw new Error('expected an ApiError');
}

describe('TemporaryGrants', () => {
  it('allows exactly the granted tools, to that requester, in that project, and lists the grant', () => {
    const { now } = new TestClock();
    const grants = new TemporaryGrants();
    const grant = grants.create('demo', 'QA', ['idea_memory_write', 'idea_ask_agent'], 3600, now);
    expect(grant).toEqual({
      id: stringMatching(/^[A-Za-z0-9_-]{12}$/),
      project: 'demo',
      requester: 'QA',
      tools: ['idea_ask_agent', 'idea_memory_write'],
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + HOUR).toISOString(),
    });
    expect(grants.has('demo', 'QA', 'idea_memory_write', now)).toBe(true);
    expect(grants.has('demo', 'QA', 'idea_ask_agent', now)).toBe(true);
    expect(grants.has('demo', 'QA', 'idea_ticket_create', now)).toBe(false);
    expect(grants.has('demo', 'Git', 'idea_memory_write', now)).toBe(false);
    expect(grants.has('other', 'QA', 'idea_memory_write', now)).toBe(false);
    expect(grants.list('demo', now)).toEqual([grant]);
    expect(grants.list('other', now)).toEqual([]);
  });

  it('refuses names outside the catalog, duplicates and empty names, and then grants nothing', () => {
    const { now } = new TestClock();
    const grants = new TemporaryGrants();
    const refused = codeOf(() =>
      grants.create('demo', 'QA', ['idea_memory_write', 'rm_rf', 'idea_memory_write', '', '__proto__'], 60, now),
    );
    expect(refused).toEqual({
      code: 'invalid_tools',
      details: { unknown: ['rm_rf', '__proto__'], duplicates: ['idea_memory_write'], empty: 1 },
    });
    expect(codeOf(() => grants.create('demo', 'QA', [], 60, now)).code).toBe('invalid_tools');
    expect(grants.has('demo', 'QA', 'idea_memory_write', now)).toBe(false);
    expect(grants.has('demo', 'QA', 'rm_rf', now)).toBe(false);
    expect(grants.list('demo', now)).toEqual([]);
  });

  it('grants only agents: anonymous and ticket-assistant requesters and malformed ids are refused', () => {
    const { now } = new TestClock();
    const grants = new TemporaryGrants();
    for (const requester of ['', 'mcp', 'ticket-assistant:demo:82', ' QA', 'QA:x', 'a/b', 'x'.repeat(129), 'bad\u0000id']) {
      expect(codeOf(() => grants.create('demo', requester, ['idea_memory_write'], 60, now)).code).toBe('invalid_requester');
    }
    expect(grants.list('demo', now)).toEqual([]);
  });

  it('property: grants exactly the requesters that /decide resolves as agents (one requester grammar)', () => {
    const { now } = new TestClock();
    const requester = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('', 'mcp', 'MCP', 'QA', 'ticket-assistant:demo:82', 'Ticket-Assistant:demo:82', 'ticket-assistant::82'),
    );
    fc.assert(
      fc.property(requester, (asked) => {
        const grants = new TemporaryGrants();
        let granted = true;
        try {
          grants.create('demo', asked, ['idea_memory_write'], 60, now);
        } catch (error) {
          expect((error as ApiError).code).toBe('invalid_requester');
          granted = false;
        }
        expect(granted).toBe(parseRequester(asked).kind === 'agent');
      }),
      { numRuns: 300 },
    );
  });

  it('accepts a lifetime of 1 to 86,400 whole seconds only', () => {
    const { now } = new TestClock();
    const grants = new TemporaryGrants();
    for (const ttl of [0, -1, 86_401, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(codeOf(() => grants.create('demo', 'QA', ['idea_memory_write'], ttl, now)).code).toBe('invalid_ttl');
    }
    expect(grants.create('demo', 'QA', ['idea_memory_write'], 1, now).expiresAt).toBe(new Date(now + 1000).toISOString());
    expect(grants.create('demo', 'QA', ['idea_memory_write'], 86_400, now).expiresAt).toBe(new Date(now + 86_400_000).toISOString());
  });

  it('stops allowing at its expiry on the next call, and an expired grant is no longer listed or revocable', () => {
    const clock = new TestClock();
    const grants = new TemporaryGrants();
    const grant = grants.create('demo', 'QA', ['idea_memory_write'], 60, clock.now);
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.advance(59_999))).toBe(true);
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.advance(1))).toBe(false);
    expect(grants.list('demo', clock.now)).toEqual([]);
    expect(codeOf(() => grants.revoke('demo', grant.id, clock.now)).code).toBe('not_found');
  });

  it('a revoked grant stops allowing at once; another grant of the same tool keeps allowing until its own end', () => {
    const clock = new TestClock();
    const grants = new TemporaryGrants();
    const short = grants.create('demo', 'QA', ['idea_memory_write'], 60, clock.now);
    const long = grants.create('demo', 'QA', ['idea_memory_write', 'idea_ask_agent'], 600, clock.now);
    expect(grants.revoke('demo', long.id, clock.now)).toEqual(long);
    expect(grants.has('demo', 'QA', 'idea_ask_agent', clock.now)).toBe(false);
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(true);
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.advance(60_000))).toBe(false);
    expect(codeOf(() => grants.revoke('demo', short.id, clock.now)).code).toBe('not_found');
    expect(codeOf(() => grants.revoke('demo', 'no-such-id', clock.now)).code).toBe('not_found');
    expect(codeOf(() => grants.revoke('other', long.id, clock.now)).code).toBe('not_found');
  });

  it('lists the live grants newest first', () => {
    const clock = new TestClock();
    const grants = new TemporaryGrants();
    const first = grants.create('demo', 'QA', ['idea_memory_write'], 600, clock.now);
    const second = grants.create('demo', 'Git', ['idea_ask_agent'], 600, clock.advance(1000));
    expect(grants.list('demo', clock.now).map((grant) => grant.id)).toEqual([second.id, first.id]);
  });

  it(`holds at most ${MAX_GRANTS_PER_PROJECT} live grants per project; expired ones make room`, () => {
    const clock = new TestClock();
    const grants = new TemporaryGrants();
    for (let index = 0; index < MAX_GRANTS_PER_PROJECT - 1; index += 1)
      grants.create('demo', `agent-${index}`, ['idea_memory_write'], 600, clock.now);
    grants.create('demo', 'short', ['idea_memory_write'], 1, clock.now);
    expect(codeOf(() => grants.create('demo', 'QA', ['idea_memory_write'], 600, clock.now)).code).toBe('limit_exceeded');
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    grants.create('other', 'QA', ['idea_memory_write'], 600, clock.now);
    clock.advance(1000);
    expect(grants.create('demo', 'QA', ['idea_memory_write'], 600, clock.now).requester).toBe('QA');
  });

  it('forgets a dropped project', () => {
    const { now } = new TestClock();
    const grants = new TemporaryGrants();
    grants.create('demo', 'QA', ['idea_memory_write'], 600, now);
    grants.dropProject('demo');
    expect(grants.has('demo', 'QA', 'idea_memory_write', now)).toBe(false);
    expect(grants.list('demo', now)).toEqual([]);
  });

  it('property: has() is true iff a live, unrevoked grant of that project and requester names the tool', () => {
    const project = fc.constantFrom('p1', 'p2');
    const requester = fc.constantFrom('QA', 'Git', 'mcp', 'ticket-assistant:p1:1');
    const tool = fc.oneof(fc.constantFrom(...names), fc.constantFrom('rm_rf', '', 'constructor'));
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('create' as const),
        project,
        requester,
        tools: fc.array(tool, { maxLength: 4 }),
        ttl: fc.integer({ min: 0, max: 120 }),
      }),
      fc.record({ kind: fc.constant('revoke' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 90_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 30 }), project, requester, tool, (operations, askedProject, asked, askedTool) => {
        const clock = new TestClock();
        const grants = new TemporaryGrants();
        const model: { id: string; project: string; requester: string; tools: string[]; expiresAt: number }[] = [];
        for (const operation of operations) {
          if (operation.kind === 'wait') clock.advance(operation.ms);
          else if (operation.kind === 'revoke') {
            const victim = model.splice(operation.pick % Math.max(model.length, 1), 1)[0];
            if (victim !== undefined && victim.expiresAt > clock.now) grants.revoke(victim.project, victim.id, clock.now);
          } else {
            try {
              const grant = grants.create(operation.project, operation.requester, operation.tools, operation.ttl, clock.now);
              model.push({ ...grant, expiresAt: Date.parse(grant.expiresAt) });
            } catch (error) {
              expect(error).toBeInstanceOf(ApiError);
            }
          }
          const expected = model.some(
            (grant) =>
              grant.project === askedProject && grant.requester === asked && grant.tools.includes(askedTool) && grant.expiresAt > clock.now,
          );
          expect(grants.has(askedProject, asked, askedTool, clock.now)).toBe(expected);
          if (!names.includes(askedTool as (typeof names)[number]) || asked === 'mcp' || asked.startsWith('ticket-assistant:'))
            expect(expected).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});
