/**
 * `POST /decide` throughput at N connections: the service vs a bare Fastify route with the same
 * schemas (the stack's ceiling) vs Fastify + Cedar deciding the same policy (docs/api.md#targets). A plain
 * node:http route with the same constant answer puts the Cedar ratio in scale: routes that decide
 * nothing show, in the same run, how far ahead of Cedar a route can be on this machine at all.
 */
import { rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { demoExpectedAllow, demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { cpuRpsOf, forkedInterleavedLoad, rpsOf, type ForkedServer } from '../lib/interleave.js';
import { startServer, type ServerMode } from '../lib/processes.js';
import { fmt, median, pairedRatio } from '../lib/stats.js';

/** Every deciding server must answer the mix as docs/api.md#resolving-a-decision says, or the comparison means nothing. */
async function checkAgreement(servers: ReadonlyMap<string, ForkedServer>, modes: ReadonlyMap<string, ServerMode>): Promise<void> {
  const queries = demoQueryMix();
  for (const [name, server] of servers) {
    if (modes.get(name) === 'bare' || modes.get(name) === 'node-http') continue;
    const pool = singleConnectionPool(server.origin);
    try {
      for (const query of queries) {
        const decision = await postDecide(pool, query);
        if (decision.allow !== demoExpectedAllow(query)) {
          throw new Error(`${name} decides ${JSON.stringify(query)} as allow=${decision.allow}, expected ${!decision.allow}`);
        }
      }
    } finally {
      await pool.close();
    }
  }
}

/** docs/api.md#targets: `POST /decide` throughput at least 0.85× the bare Fastify route. */
const BARE_TARGET = 0.85;

interface Contender {
  name: string;
  mode: ServerMode;
  logger?: boolean;
}

/**
 * The service twice (quiet as in tests, and with its production info logging) and the baselines.
 * In this order (and its reverse every other round) the service runs right after or right before
 * the bare route and Cedar preparsed, the two baselines with the tightest targets, and the
 * node:http route right next to Cedar: a round's ratio then pairs runs made back to back, and a
 * burst of interference (they last seconds on this shared machine) is less likely to fall on one
 * side of a pair only.
 */
const CONTENDERS: readonly Contender[] = [
  { name: 'service+logs', mode: 'ours', logger: true },
  { name: 'bare', mode: 'bare' },
  { name: 'service', mode: 'ours' },
  { name: 'cedar', mode: 'cedar' },
  { name: 'node-http', mode: 'node-http' },
  { name: 'cedar-text', mode: 'cedar-text' },
];

export async function throughputSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const haveService = existsSync(ctx.appModule);
  if (!haveService) ctx.note(`${ctx.appModule} does not exist yet: throughput measured for the baselines only.`);
  const contenders = CONTENDERS.filter((contender) => haveService || contender.mode !== 'ours');
  const modes = new Map(contenders.map((contender) => [contender.name, contender.mode]));
  const bodies = demoQueryMix();
  const allowed = bodies.filter(demoExpectedAllow).length;
  ctx.log(
    `  query mix: ${bodies.length} queries, ${allowed} allowed, ${bodies.length - allowed} denied; fresh server processes every round`,
  );
  try {
    const results = await forkedInterleavedLoad(
      ctx,
      contenders.map((contender) => ({
        name: contender.name,
        bodies,
        start: () =>
          startServer(contender.mode, { projectsRoot: root, appModule: ctx.appModule, ...(contender.logger ? { logger: true } : {}) }),
      })),
      (servers) => checkAgreement(servers, modes),
    );
    const rps = (name: string): number[] => rpsOf(results.get(name) ?? []);
    const conns = `${ctx.settings.connections} conns`;
    const ratioBare = pairedRatio(rps('service'), rps('bare'));
    const ratioCedar = pairedRatio(rps('service'), rps('cedar'));
    const ratioCedarText = pairedRatio(rps('service'), rps('cedar-text'));
    const ratioLogged = pairedRatio(rps('service+logs'), rps('bare'));
    // The ceilings: what a route doing no deciding at all reaches against Cedar in the same run.
    const ceilingBare = pairedRatio(rps('bare'), rps('cedar'));
    const ceilingNode = pairedRatio(rps('node-http'), rps('cedar'));
    const cpuRps = (name: string): number[] => cpuRpsOf(results.get(name) ?? []);
    const cpuRatioBare = pairedRatio(cpuRps('service'), cpuRps('bare'));
    const cpuRatioCedar = pairedRatio(cpuRps('service'), cpuRps('cedar'));
    const cpuRatioCedarText = pairedRatio(cpuRps('service'), cpuRps('cedar-text'));
    const cpuCeilingBare = pairedRatio(cpuRps('bare'), cpuRps('cedar'));
    const cpuCeilingNode = pairedRatio(cpuRps('node-http'), cpuRps('cedar'));
    const cpuPerRequest = (name: string): string => {
      const rounds = results.get(name) ?? [];
      const offMain = median(rounds.map((result) => result.offMainUsPerRequest));
      return `${fmt(median(rounds.map((result) => result.cpuUsPerRequest)), 'µs')} (${fmt(offMain, 'µs')} off main thread)`;
    };
    const section = 'decide throughput';
    const value = (name: string): string => fmt(median(rps(name)), 'req/s');
    const pass = (ok: boolean): boolean | null => (haveService ? ok : null);
    return {
      rows: [
        { section, figure: `service (buildApp, logger off), ${conns}`, value: value('service'), target: '', pass: null },
        { section, figure: `bare Fastify route, ${conns}`, value: value('bare'), target: '', pass: null },
        { section, figure: `plain node:http route (constant answer), ${conns}`, value: value('node-http'), target: '', pass: null },
        { section, figure: `Fastify + Cedar (preparsed), ${conns}`, value: value('cedar'), target: '', pass: null },
        { section, figure: `Fastify + Cedar (isAuthorized, policy text), ${conns}`, value: value('cedar-text'), target: '', pass: null },
        {
          section,
          figure: 'service / bare',
          value: `${fmt(ratioBare)}×`,
          baseline: 'bare route',
          target: `≥ ${BARE_TARGET}×`,
          pass: pass(ratioBare >= BARE_TARGET),
        },
        {
          section,
          figure: 'service / Cedar (preparsed)',
          value: `${fmt(ratioCedar)}×`,
          baseline: 'Cedar preparsed',
          target: '≥ 2.5×',
          pass: pass(ratioCedar >= 2.5),
        },
        {
          section,
          figure: 'service / Cedar (policy text)',
          value: `${fmt(ratioCedarText)}×`,
          baseline: 'Cedar isAuthorized',
          target: '≥ 2.5×',
          pass: pass(ratioCedarText >= 2.5),
        },
        { section, figure: 'server CPU per request: service', value: cpuPerRequest('service'), target: '', pass: null },
        {
          section,
          figure: 'server CPU per request: bare / Cedar preparsed / Cedar text',
          value: `${cpuPerRequest('bare')} / ${cpuPerRequest('cedar')} / ${cpuPerRequest('cedar-text')}`,
          target: '',
          pass: null,
        },
        { section, figure: 'server CPU per request: plain node:http', value: cpuPerRequest('node-http'), target: '', pass: null },
        {
          section,
          figure: 'service / bare, by CPU cost per request',
          value: `${fmt(cpuRatioBare)}×`,
          baseline: 'bare route',
          target: `≥ ${BARE_TARGET}×`,
          pass: pass(cpuRatioBare >= BARE_TARGET),
        },
        {
          section,
          figure: 'service / Cedar (preparsed), by CPU cost per request',
          value: `${fmt(cpuRatioCedar)}×`,
          baseline: 'Cedar preparsed',
          target: '≥ 2.5×',
          pass: pass(cpuRatioCedar >= 2.5),
        },
        {
          section,
          figure: 'service / Cedar (policy text), by CPU cost per request',
          value: `${fmt(cpuRatioCedarText)}×`,
          baseline: 'Cedar isAuthorized',
          target: '≥ 2.5×',
          pass: pass(cpuRatioCedarText >= 2.5),
        },
        {
          section,
          figure: 'ceiling: bare Fastify route / Cedar (preparsed)',
          value: `${fmt(ceilingBare)}× (by CPU ${fmt(cpuCeilingBare)}×)`,
          baseline: 'Cedar preparsed',
          target: '(info)',
          pass: null,
        },
        {
          section,
          figure: 'ceiling: plain node:http route / Cedar (preparsed)',
          value: `${fmt(ceilingNode)}× (by CPU ${fmt(cpuCeilingNode)}×)`,
          baseline: 'Cedar preparsed',
          target: '(info)',
          pass: null,
        },
        {
          section,
          figure: `service with info logging (denials logged, to /dev/null), ${conns}`,
          value: value('service+logs'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'service with info logging / bare',
          value: `${fmt(ratioLogged)}×`,
          baseline: 'bare route',
          target: '(info)',
          pass: null,
        },
      ],
      raw: Object.fromEntries(results),
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
