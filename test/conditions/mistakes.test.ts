/**
 * docs/policy-as-code.md#condition-mistakes: each malformed condition is reported on its own, at the
 * faulty value's line and column, saying what was expected and what was found; the service's
 * `policy_invalid` message says the first one the same way.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePolicyFile } from '../../server/domain/compile.js';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** One mistake per line, so each message's line tells which value it is about. */
const MISTAKES: [condition: string, message: string][] = [
  ['{ "in": "QA" }', 'agentId: "in" expects 1–100 strings or numbers, got the string "QA"'],
  ['{ "in": [] }', 'agentId: "in" expects 1–100 strings or numbers, got an empty list'],
  ['{ "in": [true] }', 'agentId: "in" expects 1–100 strings or numbers, got true in it'],
  ['{ "in": ["QA"], "notIn": ["Main"] }', 'agentId: one operator per argument, got in and notIn'],
  ['{ "absent": "yes" }', 'agentId: "absent" expects true, got the string "yes"'],
  ['{ "absent": false }', 'agentId: "absent" expects true, got false (to allow the argument, remove the condition)'],
  ['{ "regex": "QA" }', 'agentId: unknown operator "regex" (in, notIn, prefix or absent)'],
  ['{ "In": ["QA"] }', 'agentId: unknown operator "In", did you mean "in"?'],
  ['{ "notIn": ["QA", false] }', 'agentId: "notIn" expects 1–100 strings or numbers, got false in it'],
];

/** A document with one agent per mistake, each conditioning idea_ask_agent's agentId on its own line. */
function document(): string {
  const agents = MISTAKES.map(
    ([condition], index) =>
      `    { "agentId": "A${index}", "policy": { "allowedTools": ["idea_ask_agent"], "conditions": { "idea_ask_agent": {\n      "agentId": ${condition} } } } }`,
  );
  return `{\n  "version": 1,\n  "agents": [\n${agents.join(',\n')}\n  ]\n}\n`;
}

describe('condition mistakes', () => {
  it('check says each of nine mistakes at its value, never the generic union message', async () => {
    const dir = path.join(await tempFolder(), 'demo');
    await mkdir(path.join(dir, '.ideai'), { recursive: true });
    const text = document();
    await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), text);
    const run = await runSourceCli(['check', '.'], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).not.toContain('Expected union value');
    const errors = run.stdout.split('\n').filter((line) => line.includes(' error '));
    expect(errors).toHaveLength(MISTAKES.length);
    for (const [index, [, message]] of MISTAKES.entries()) {
      const line = text.split('\n').findIndex((one) => one.includes(`"A${index}"`)) + 2;
      const found = errors.find((one) => one.endsWith(message));
      expect(found, message).toBeDefined();
      expect(found).toMatch(new RegExp(`^\\.ideai/mcp-tool-permissions\\.json:${line}:\\d+: error invalid_condition: `));
      // The column is the faulty value's, not the condition object's.
      const column = Number(/:\d+:(\d+):/.exec(found ?? '')?.[1]);
      expect(column, message).toBeGreaterThan((text.split('\n')[line - 1] ?? '').indexOf('{') + 1);
    }
  });

  it('the service refuses the file with the first mistake, said the same way', () => {
    const compiled = compilePolicyFile(new TextEncoder().encode(document()));
    expect(compiled.status).toBe('invalid');
    if (compiled.status !== 'invalid') return;
    expect(compiled.code).toBe('invalid_condition');
    expect(compiled.error.message).toBe(
      `invalid condition at /agents/0/policy/conditions/idea_ask_agent/agentId/in: ${MISTAKES[0]?.[1] ?? ''}`,
    );
  });
});
