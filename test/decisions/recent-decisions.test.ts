import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DECISION_REASONS, POLICY_SOURCES, type RecentDecision } from '../../schemas/index.js';
import { RecentDecisions, decisionIdOf, type RecordedDecision } from '../../server/decisions/recent-decisions.js';

describe('recent decisions ring', () => {
  it('hands its dirty rings out at most `limit` at a time, in turn, so every project is saved', () => {
    const rings = new RecentDecisions('p', 10);
    const decision = (sequence: number): RecordedDecision => ({
      sequence,
      requester: 'QA',
      tool: 'idea_memory_write',
      allow: false,
      reason: 'not_in_allowlist',
      source: 'project-default',
    });
    for (let project = 0; project < 100; project++) rings.record(`p${String(project)}`, decision(project + 1));
    const taken: string[] = [];
    for (let flush = 0; flush < 4; flush++) {
      const batch = rings.takeDirty(32);
      expect(batch.length).toBe(flush < 3 ? 32 : 4);
      taken.push(...batch.map((entry) => entry.project));
    }
    expect(new Set(taken).size).toBe(100);
    expect(rings.takeDirty(32)).toEqual([]);
    // The turn goes on from the last project taken (p95), whatever order the projects decide in.
    rings.record('p0', decision(101));
    rings.record('p99', decision(102));
    expect(rings.takeDirty(1).map((entry) => entry.project)).toEqual(['p99']);
    expect(rings.takeDirty(1).map((entry) => entry.project)).toEqual(['p0']);
  });

  it('keeps the last entries, newest first, with the right names after many distinct requesters', () => {
    const ring = new RecentDecisions('p', 100);
    for (let sequence = 1; sequence <= 5000; sequence++) {
      ring.record('demo', {
        sequence,
        requester: `agent-${sequence}`,
        tool: sequence % 2 === 0 ? 'idea_memory_write' : `unknown_${sequence}`,
        allow: sequence % 3 === 0,
        reason: sequence % 3 === 0 ? 'allowed' : 'not_in_allowlist',
        source: 'project-default',
      });
    }
    const all = ring.query('demo', undefined, 1000);
    expect(all).toHaveLength(100);
    expect(all[0]).toMatchObject({
      decisionId: decisionIdOf('p', 5000),
      requester: 'agent-5000',
      tool: 'idea_memory_write',
      allow: false,
      reason: 'not_in_allowlist',
      source: 'project-default',
    });
    expect(all[99]).toMatchObject({ decisionId: decisionIdOf('p', 4901), requester: 'agent-4901', tool: 'unknown_4901' });
    const allowed = ring.query('demo', true, 5);
    expect(allowed.map((entry) => entry.decisionId)).toEqual([4998, 4995, 4992, 4989, 4986].map((sequence) => decisionIdOf('p', sequence)));
    expect(allowed.every((entry) => entry.reason === 'allowed' && entry.allow)).toBe(true);
    expect(ring.query('other', undefined, 10)).toEqual([]);
  });

  it('answers every query as a plain array of every decision would, whatever was recorded and dropped', () => {
    interface Names {
      requester: string | null;
      tool: string | null;
    }
    type Step =
      | { kind: 'record'; project: string; decision: Omit<RecordedDecision, 'sequence' | 'requester' | 'tool'> & Names; at: number }
      | { kind: 'drop'; project: string }
      | { kind: 'query'; project: string; allow: boolean | undefined; limit: number };
    const project = fc.constantFrom('a', 'b');
    // A known name (interned once) or, as `null`, a name never seen before (the table grows past its bound and is compacted).
    const name = fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom('QA', 'Main', 'idea_memory_write', '') },
      { weight: 2, arbitrary: fc.constant(null) },
    );
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('record' as const),
          project,
          decision: fc.record({
            requester: name,
            tool: name,
            allow: fc.boolean(),
            reason: fc.constantFrom(...DECISION_REASONS),
            source: fc.constantFrom(...POLICY_SOURCES),
          }),
          at: fc.integer({ min: 0, max: 4_102_444_800_000 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), project }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('query' as const),
          project,
          allow: fc.option(fc.boolean(), { nil: undefined }),
          limit: fc.integer({ min: 0, max: 12 }),
        }),
      },
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(step, { minLength: 200, maxLength: 400 }), (capacity, steps) => {
        const ring = new RecentDecisions('x', capacity);
        const model = new Map<string, RecentDecision[]>();
        let sequence = 0;
        const expected = (name: string, allow: boolean | undefined, limit: number): RecentDecision[] =>
          (model.get(name) ?? [])
            .slice(-capacity)
            .reverse()
            .filter((entry) => allow === undefined || entry.allow === allow)
            .slice(0, limit);
        for (const current of steps) {
          if (current.kind === 'record') {
            sequence++;
            const decision = {
              ...current.decision,
              requester: current.decision.requester ?? `agent-${sequence}`,
              tool: current.decision.tool ?? `tool-${sequence}`,
            };
            ring.record(current.project, { ...decision, sequence }, current.at);
            const entries = model.get(current.project) ?? [];
            entries.push({ decisionId: decisionIdOf('x', sequence), at: new Date(current.at).toISOString(), ...decision });
            model.set(current.project, entries);
          } else if (current.kind === 'drop') {
            ring.dropProject(current.project);
            model.delete(current.project);
          } else {
            expect(ring.query(current.project, current.allow, current.limit)).toEqual(
              expected(current.project, current.allow, current.limit),
            );
            // What a save writes reads back as the same ring, however full or wrapped it is.
            for (const saved of ring.takeDirty()) {
              const readBack = new RecentDecisions('y', capacity);
              expect(readBack.restore(saved.project, saved.snapshot)).toBe(true);
              expect(readBack.query(saved.project, undefined, capacity)).toEqual(expected(saved.project, undefined, capacity));
            }
          }
          // Every entry of both projects after every step, so a name table compaction that loses one is seen at once.
          for (const each of ['a', 'b']) expect(ring.query(each, undefined, capacity)).toEqual(expected(each, undefined, capacity));
        }
      }),
      { numRuns: 100 },
    );
  });
});
