/** docs/api.md#http-api: the agent ids a policy may hold, in the service and in the published pattern. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { INVISIBLE_CHARACTER_SOURCE, WRITABLE_AGENT_ID_REGEX } from '../../schemas/ids.js';
import { agentIdProblem } from '../../server/domain/agent-id.js';
import { compilePolicyFile } from '../../server/domain/compile.js';

const override = (agentId: string) =>
  Buffer.from(JSON.stringify({ version: 1, agents: [{ agentId, policy: { allowedTools: ['idea_memory_write'] } }] }));

describe('agentIdProblem', () => {
  it.each(['QA', 'DevFrontend', 'Q A', 'release-2.1', 'é', 'Qualité', '😀', 'MCP', 'mcp2', 'x'.repeat(128), 'Агент-2', 'Ωμέγα', '测试'])(
    'accepts %j',
    (id) => {
      expect(agentIdProblem(id)).toBeUndefined();
    },
  );

  it.each([
    ['', /anonymous requester/],
    ['mcp', /anonymous requester/],
    ['a:b', /no ':'/],
    [' QA', /whitespace/],
    ['x'.repeat(129), /1 to 128/],
    ['QA\u200b', /invisible character U\+200B/],
    ['\u202eQA', /invisible character U\+202E/],
    ['QA\ufe0f', /invisible character U\+FE0F/],
    ['QA\u{e0041}', /invisible character U\+E0041/],
    ['Q\ud800A', /unpaired UTF-16 surrogate/],
    ['QA\udc00', /unpaired UTF-16 surrogate/],
    ['QA\ufffd', /U\+FFFD/],
    ['Q\u00a0A', /whitespace character U\+00A0/],
    ['Q\u2028A', /whitespace character U\+2028/],
    ['QA ', /ends with a space/],
    ['ＱＡ', /reads as "QA"/],
    ['Qualite\u0301', /NFKC/],
    ['ﬁle', /reads as "file"/],
    ['Q\u0410', /mixes Latin and Cyrillic/],
    ['\u0391QA', /mixes Latin and Greek/],
    ['\u0420\u043e\u0431\u043e\u0442-x', /mixes Latin and Cyrillic/],
  ])('refuses %j', (id, why) => {
    expect(agentIdProblem(id)).toMatch(why);
  });

  it('agrees with the published pattern, which leaves the NFKC and mixed-script rules to the service', () => {
    const id = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.constantFrom('mcp', 'QA\ufffd', 'QA ', 'Q A', 'x'.repeat(128), 'x'.repeat(129), '😀'.repeat(64), '😀'.repeat(65)),
    );
    fc.assert(
      fc.property(id, (value) => {
        const problem = agentIdProblem(value);
        expect(WRITABLE_AGENT_ID_REGEX.test(value), JSON.stringify(value)).toBe(
          problem === undefined || problem.includes('NFKC') || problem.includes('mixed-script'),
        );
      }),
      { numRuns: 5000 },
    );
  });

  it("lists every code point the running Node classes as format or default-ignorable in the pattern's invisible characters", () => {
    const unicode = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
    const pattern = new RegExp(`^(?:${INVISIBLE_CHARACTER_SOURCE})$`);
    const missing: string[] = [];
    const extra: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const character = String.fromCodePoint(code);
      const expected = unicode.test(character);
      if (expected && !pattern.test(character)) missing.push(code.toString(16));
      if (!expected && pattern.test(character)) extra.push(code.toString(16));
    }
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
  });
});

describe('agent ids in a policy file', () => {
  it.each(['mcp', 'QA\u200b', 'ＱＡ', 'QA ', 'Q\ud800', 'QA\ufffd'])(
    'makes a file with an override for %j invalid, naming the id and where',
    (id) => {
      const policy = compilePolicyFile(override(id));
      expect(policy).toMatchObject({ status: 'invalid', error: { path: '/agents/0/agentId' } });
      if (policy.status === 'invalid')
        expect(policy.error.message).toContain(`invalid agent id ${JSON.stringify(id)} at /agents/0/agentId`);
    },
  );

  it('keeps a file whose ids are all fine', () => {
    expect(compilePolicyFile(override('Q A'))).toMatchObject({ status: 'ok' });
    expect(compilePolicyFile(override('Qualité'))).toMatchObject({ status: 'ok' });
  });
});
