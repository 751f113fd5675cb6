/**
 * The recent-decisions rings on disk (docs/api.md#policy-as-code-idea-pdp-and-previews): saved and read back with their ids and
 * issueRef, nothing else of the arguments, a corrupt file read as an empty history; and the
 * published JSON Schema of the test file is the one the code validates with.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_TEST_SCHEMA_PATH, publishedTestSchemaText } from '../../schemas/publish.js';
import { RecentDecisions, type RecordedDecision } from '../../server/decisions/recent-decisions.js';
import { RecentDecisionsFile } from '../../server/decisions/recent-decisions-file.js';
import { tempFolder } from '../support/temp-folder.js';

const decision = (sequence: number, issueRef?: string): RecordedDecision => ({
  sequence,
  requester: sequence % 2 === 0 ? 'ticket-assistant:demo:12' : 'QA',
  tool: 'idea_ticket_update_carnet',
  allow: sequence % 2 === 0,
  reason: sequence % 2 === 0 ? 'allowed' : 'not_in_allowlist',
  source: 'ephemeral',
  issueRef,
});

function collectingLogger(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

describe('RecentDecisionsFile', () => {
  it('saves only what the kept decisions use: 20,000 conditioned calls make no bigger a file than 1,000', async () => {
    const stateDir = await tempFolder();
    const recent = new RecentDecisions('aaaa', 1000);
    const conditioned = (sequence: number): RecordedDecision => ({
      sequence,
      requester: 'DevFrontend',
      tool: 'idea_run_in_background',
      allow: true,
      reason: 'allowed',
      source: 'agent-override',
      // A distinct 120-character command each time: each is a name of the ring.
      details: { kept: ['command'], values: { command: `npm test -- ${String(sequence).padStart(8, '0')}`.padEnd(120, 'x') } },
    });
    const file = path.join(stateDir, 'recent-decisions', 'demo.json');
    const sizeAfter = async (calls: number, from: number): Promise<number> => {
      for (let sequence = from; sequence < from + calls; sequence++) recent.record('demo', conditioned(sequence));
      const saving = new RecentDecisionsFile({ stateDir, recent, logger: collectingLogger().logger });
      await saving.start();
      await saving.close();
      return (await readFile(file)).length;
    };
    const first = await sizeAfter(1000, 0);
    const later = await sizeAfter(19_000, 1000);
    // 1,000 records of 43 base64 bytes and 1,000 commands of ~150 JSON bytes: 212 KB, before as after.
    expect(later).toBeLessThanOrEqual(first);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { names: string[] };
    expect(saved.names.length).toBeLessThanOrEqual(1000 + 3);
  });

  it('reads back every kept decision with its id and issueRef, keeping only the last 1,000', async () => {
    const stateDir = await tempFolder();
    const before = new RecentDecisions('aaaa', 1000);
    for (let sequence = 1; sequence <= 1200; sequence++)
      before.record('demo', decision(sequence, sequence % 3 === 0 ? `#${sequence}` : undefined), sequence * 1000);
    const { logger, lines } = collectingLogger();
    const saving = new RecentDecisionsFile({ stateDir, recent: before, logger });
    await saving.start();
    await saving.close();
    const text = await readFile(path.join(stateDir, 'recent-decisions', 'demo.json'), 'utf8');
    expect(text).not.toContain('arguments');

    const after = new RecentDecisions('bbbb', 1000);
    const reading = new RecentDecisionsFile({ stateDir, recent: after, logger });
    await reading.start();
    await reading.close();
    expect(lines).toEqual([]);
    expect(after.query('demo', undefined, 1000)).toEqual(before.query('demo', undefined, 1000));
    expect(after.query('demo', undefined, 1)[0]?.decisionId).toBe(`aaaa-${(1200).toString(36)}`);
    expect(after.replayable('demo')).toEqual(before.replayable('demo'));
    expect(after.replayable('demo')).toHaveLength(1000);
    expect(after.replayable('demo').at(-1)).toEqual({
      at: 1_200_000,
      requester: 'ticket-assistant:demo:12',
      tool: 'idea_ticket_update_carnet',
      issueRef: '#1200',
      arguments: { issueRef: '#1200' },
      kept: ['issueRef'],
    });
    // A new decision gets this process's id prefix.
    after.record('demo', decision(1), 2_000_000);
    expect(after.query('demo', undefined, 1)[0]?.decisionId).toBe('bbbb-1');
  });

  it('writes exactly what JSON.stringify writes of the saved ring, fields in their order', async () => {
    const stateDir = await tempFolder();
    const before = new RecentDecisions('aaaa', 10);
    for (let sequence = 1; sequence <= 13; sequence++) before.record('demo', decision(sequence, `#${sequence}`), sequence * 1000);
    before.record('demo', { ...decision(14), requester: 'Agent "quoted" \u2028 é' }, 14_000);
    const saving = new RecentDecisionsFile({ stateDir, recent: before, logger: collectingLogger().logger });
    await saving.start();
    await saving.close();
    const text = await readFile(path.join(stateDir, 'recent-decisions', 'demo.json'), 'utf8');
    const saved = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(saved)).toEqual(['format', 'project', 'littleEndian', 'names', 'records']);
    expect(text).toBe(JSON.stringify(saved));
    expect(saved.names).toContain('Agent "quoted" \u2028 é');
  });

  it('reads a corrupt file as an empty history, with a warning, and starts', async () => {
    const stateDir = await tempFolder();
    const { logger, lines } = collectingLogger();
    const seed = new RecentDecisionsFile({ stateDir, recent: new RecentDecisions('aaaa'), logger });
    await seed.start();
    await seed.close();
    const file = path.join(stateDir, 'recent-decisions', 'demo.json');
    const records = Buffer.alloc(32, 0xff).toString('base64');
    for (const corrupt of ['{"format":1,', JSON.stringify({ format: 1, project: 'demo', littleEndian: true, names: [], records })]) {
      await writeFile(file, corrupt);
      const recent = new RecentDecisions('cccc');
      const reading = new RecentDecisionsFile({ stateDir, recent, logger });
      await reading.start();
      await reading.close();
      expect(recent.replayable('demo')).toEqual([]);
    }
    expect(lines.filter((line) => line.includes('not read back'))).toHaveLength(2);
  });
});

describe('RecentDecisionsFile names', () => {
  it('skips a file whose name is not %-encoded (logged) and reads back every other ring', async () => {
    const stateDir = await tempFolder();
    const before = new RecentDecisions('aaaa');
    for (const project of ['a1', 'b2', 'c3']) before.record(project, decision(1), 1000);
    const { logger, lines } = collectingLogger();
    const saving = new RecentDecisionsFile({ stateDir, recent: before, logger });
    await saving.start();
    await saving.close();
    for (const bad of ['%E0%A4%A.json', '%.json', '%FF.json']) await writeFile(path.join(stateDir, 'recent-decisions', bad), '{}');
    const after = new RecentDecisions('bbbb');
    const reading = new RecentDecisionsFile({ stateDir, recent: after, logger });
    await reading.start();
    await reading.close();
    for (const project of ['a1', 'b2', 'c3']) expect(after.replayable(project), project).toHaveLength(1);
    expect(lines.filter((line) => line.includes('not a saved ring'))).toHaveLength(3);
  });
});

describe('schemas/mcp-tool-permissions.test.schema.json', () => {
  it('is what npm run schema:publish writes', async () => {
    expect(await readFile(PUBLISHED_TEST_SCHEMA_PATH, 'utf8')).toBe(publishedTestSchemaText());
  });
});
