/**
 * The hot path's decision cache must never change an answer: every `/decide` text equals what the
 * uncached resolution gives for the project's current policy, whatever the history of questions and
 * policy swaps, and ephemeral grants are never served from it.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG, type DecideQuery, type Decision, type PolicyDocument } from '../../schemas/index.js';
import { MAX_CACHED_BYTES } from '../../server/decisions/decision-cache.js';
import { builtinPolicy, compileDocument, invalidPolicy, type CompiledPolicy } from '../../server/domain/compile.js';
import { decide, NO_EPHEMERAL } from '../../server/domain/decide.js';
import { PolicyService } from '../../server/policy-service.js';
import type { ProjectRegistry } from '../../server/projects/registry.js';

/** A registry whose projects' policies the test swaps directly (the service only calls `get`). */
function fakeRegistry(policies: Map<string, CompiledPolicy>): ProjectRegistry {
  return {
    get: (id: string) => {
      const policy = policies.get(id);
      return policy ? { id, state: { policy } } : undefined;
    },
  } as unknown as ProjectRegistry;
}

function serviceOver(policies: Map<string, CompiledPolicy>): PolicyService {
  return new PolicyService({ registry: fakeRegistry(policies), logger: pino({ level: 'silent' }) });
}

const withoutId = ({ decisionId: _id, ...rest }: Decision): Omit<Decision, 'decisionId'> => rest;

const toolNames = TOOL_CATALOG.map((tool) => tool.name);
const toolArb = fc.oneof(fc.constantFrom(...toolNames), fc.constantFrom('idea_nope', 'x"y\\z', ''));
const requesterArb = fc.oneof(fc.constantFrom('Main', 'QA', 'Dev"Ops', '', 'mcp', 'ticket-assistant:a:82'), fc.string({ maxLength: 8 }));
const documentArb: fc.Arbitrary<PolicyDocument> = fc.record(
  {
    version: fc.constant(1 as const),
    projectDefault: fc.record({ allowedTools: fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 25 }) }),
    agents: fc.uniqueArray(
      fc.record({
        agentId: fc.constantFrom('Main', 'QA', 'Dev"Ops'),
        policy: fc.record({ allowedTools: fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 25 }) }),
      }),
      { selector: (agent) => agent.agentId, maxLength: 3 },
    ),
  },
  { requiredKeys: ['version'] },
);
const policyArb: fc.Arbitrary<CompiledPolicy> = fc.oneof(
  documentArb.map((document) => compileDocument(document, 'rev-doc')),
  fc.constant(builtinPolicy()),
  fc.constant(invalidPolicy('rev-bad', { message: 'Unexpected token', line: 1, column: 2 })),
);
/** `jsonFirst`: whether `/decide` (the serialized answer) or `/decide/batch` (the object) asks first. */
type Step = { kind: 'ask'; query: DecideQuery; jsonFirst: boolean } | { kind: 'swap'; project: string; policy: CompiledPolicy | undefined };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({
        query: fc.record({ project: fc.constantFrom('a', 'b', 'gone'), requester: requesterArb, tool: toolArb }),
        jsonFirst: fc.boolean(),
      })
      .map((ask) => ({ kind: 'ask' as const, ...ask })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ project: fc.constantFrom('a', 'b'), policy: fc.option(policyArb, { nil: undefined }) })
      .map((swap) => ({ kind: 'swap' as const, ...swap })),
  },
);

describe('decision cache (POST /decide text)', () => {
  it('answers exactly the uncached decision of the current policy, over any history of questions and policy swaps', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), (steps) => {
        const policies = new Map<string, CompiledPolicy>([
          ['a', builtinPolicy()],
          ['b', builtinPolicy()],
        ]);
        const service = serviceOver(policies);
        const ids = new Set<string>();
        for (const step of steps) {
          if (step.kind === 'swap') {
            if (step.policy) policies.set(step.project, step.policy);
            else policies.delete(step.project);
            continue;
          }
          const expected = decide(step.query, policies.get(step.query.project), NO_EPHEMERAL);
          const asObject = (): Decision => service.decide(step.query);
          const asJson = (): Decision => JSON.parse(service.decideJson(step.query)) as Decision;
          const [first, second] = step.jsonFirst ? [asJson(), asObject()] : [asObject(), asJson()];
          expect(withoutId(first)).toEqual(expected);
          expect(withoutId(second)).toEqual(expected);
          for (const answered of [first, second]) {
            expect(ids.has(answered.decisionId)).toBe(false);
            ids.add(answered.decisionId);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a policy swap takes effect on the very next call, for a question answered from the cache before', () => {
    const policies = new Map<string, CompiledPolicy>([
      ['a', compileDocument({ version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_write'] } }] }, 'r1')],
    ]);
    const service = serviceOver(policies);
    const query = { project: 'a', requester: 'QA', tool: 'idea_memory_write' };
    for (let i = 0; i < 3; i += 1) expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: true, revision: 'r1' });
    policies.set('a', compileDocument({ version: 1 }, 'r2'));
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: false, reason: 'not_in_allowlist', revision: 'r2' });
  });

  it('answers an unknown project from the cache only until the project appears, and again once it is gone', () => {
    const policies = new Map<string, CompiledPolicy>();
    const service = serviceOver(policies);
    const query = { project: 'late', requester: 'QA', tool: 'idea_ticket_read' };
    const cache = (service as unknown as { cache: { estimatedBytes: number } }).cache;
    for (let i = 0; i < 3; i += 1)
      expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: false, reason: 'unknown_project', revision: 'none' });
    expect(cache.estimatedBytes).toBeGreaterThan(0); // the answer was cached
    policies.set('late', builtinPolicy());
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: true, reason: 'allowed', source: 'builtin-read-only' });
    policies.delete('late');
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: false, reason: 'unknown_project' });
  });

  it('never serves a ticket assistant from the cache: a withdrawn ephemeral grant denies at once', () => {
    const service = serviceOver(new Map([['a', builtinPolicy()]]));
    const query = { project: 'a', requester: 'ticket-assistant:a:82', tool: 'idea_memory_write' };
    service.putEphemeral('a', query.requester, ['idea_memory_write'], undefined, 60);
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: true, source: 'ephemeral' });
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: true });
    service.deleteEphemeral('a', query.requester);
    expect(JSON.parse(service.decideJson(query))).toMatchObject({ allow: false, source: 'builtin-read-only' });
    service.close();
  });

  it('stays bounded over all projects when every call names a new requester, and still answers right', () => {
    const policies = new Map<string, CompiledPolicy>([
      ['a', compileDocument({ version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_write'] } }] }, 'r1')],
      ['b', builtinPolicy()],
    ]);
    const service = serviceOver(policies);
    const cache = (service as unknown as { cache: { estimatedBytes: number } }).cache;
    let peak = 0;
    for (let i = 0; i < 6000; i += 1) {
      // Long names (up to the schema's limits) weigh more: the bound is in bytes, not entries.
      const requester = `agent-${i}-${'x'.repeat(i % 500)}`;
      const answered = JSON.parse(service.decideJson({ project: i % 2 ? 'a' : 'b', requester, tool: 'idea_memory_write' })) as Decision;
      expect(answered.allow).toBe(false);
      expect(answered.requester.id).toBe(requester);
      peak = Math.max(peak, cache.estimatedBytes);
      expect(cache.estimatedBytes).toBeLessThanOrEqual(MAX_CACHED_BYTES);
    }
    expect(peak).toBeGreaterThan(MAX_CACHED_BYTES / 2);
    expect(JSON.parse(service.decideJson({ project: 'a', requester: 'QA', tool: 'idea_memory_write' }))).toMatchObject({ allow: true });
  });

  it('counts the serialized prefix of an answer in the bound when /decide first makes it (not when /decide/batch caches the answer)', () => {
    const service = serviceOver(new Map([['a', builtinPolicy()]]));
    const cache = (service as unknown as { cache: { estimatedBytes: number } }).cache;
    const query = { project: 'a', requester: 'QA', tool: 'idea_memory_write' };
    service.decide(query);
    const withoutPrefix = cache.estimatedBytes;
    expect(withoutPrefix).toBeGreaterThan(0);
    const json = service.decideJson(query);
    const prefixLength = json.length - json.slice(json.lastIndexOf('"decisionId":"') + '"decisionId":"'.length).length;
    expect(cache.estimatedBytes).toBeGreaterThanOrEqual(withoutPrefix + 2 * prefixLength);
    const withPrefix = cache.estimatedBytes;
    service.decideJson(query); // made once, counted once
    expect(cache.estimatedBytes).toBe(withPrefix);
  });
});
