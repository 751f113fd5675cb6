/**
 * `POST /decide` throughput at N connections: the service vs a bare Fastify route with the same
 * schemas (the stack's ceiling) vs Fastify + Cedar deciding the same policy (SPEC §9).
 */
import { rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { demoExpectedAllow, demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { interleavedLoad, rpsOf } from '../lib/interleave.js';
import { startServer, type RunningServer, type ServerMode } from '../lib/processes.js';
import { fmt, median, pairedRatio } from '../lib/stats.js';

/** Every deciding server must answer the mix as SPEC §4 says, or the comparison means nothing. */
async function checkAgreement(ctx: BenchContext, servers: readonly RunningServer[]): Promise<void> {
  const queries = demoQueryMix();
  const allowed = queries.filter(demoExpectedAllow).length;
  ctx.log(`  query mix: ${queries.length} queries, ${allowed} allowed, ${queries.length - allowed} denied`);
  for (const server of servers) {
    if (server.mode === 'bare') continue;
    const pool = singleConnectionPool(server.origin);
    try {
      for (const query of queries) {
        const decision = await postDecide(pool, query);
        if (decision.allow !== demoExpectedAllow(query)) {
          throw new Error(`${server.mode} decides ${JSON.stringify(query)} as allow=${decision.allow}, expected ${!decision.allow}`);
        }
      }
    } finally {
      await pool.close();
    }
  }
}

export async function throughputSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const haveService = existsSync(ctx.appModule);
  if (!haveService) ctx.note(`${ctx.appModule} does not exist yet: throughput measured for the baselines only.`);
  const modes: ServerMode[] = haveService ? ['ours', 'bare', 'cedar', 'cedar-text'] : ['bare', 'cedar', 'cedar-text'];
  const servers: RunningServer[] = [];
  try {
    for (const mode of modes) servers.push(await startServer(mode, { projectsRoot: root, appModule: ctx.appModule }));
    await checkAgreement(ctx, servers);
    const bodies = demoQueryMix();
    const results = await interleavedLoad(
      ctx,
      servers.map((server) => ({ name: server.mode, origin: server.origin, bodies })),
    );
    const rps = (mode: ServerMode): number[] => rpsOf(results.get(mode) ?? []);
    const conns = `${ctx.settings.connections} conns`;
    const ratioBare = pairedRatio(rps('ours'), rps('bare'));
    const ratioCedar = pairedRatio(rps('ours'), rps('cedar'));
    const ratioCedarText = pairedRatio(rps('ours'), rps('cedar-text'));
    const section = 'decide throughput';
    return {
      rows: [
        { section, figure: `service, ${conns}`, value: fmt(median(rps('ours')), 'req/s'), target: '', pass: null },
        { section, figure: `bare Fastify route, ${conns}`, value: fmt(median(rps('bare')), 'req/s'), target: '', pass: null },
        { section, figure: `Fastify + Cedar (preparsed), ${conns}`, value: fmt(median(rps('cedar')), 'req/s'), target: '', pass: null },
        { section, figure: `Fastify + Cedar (isAuthorized, policy text), ${conns}`, value: fmt(median(rps('cedar-text')), 'req/s'), target: '', pass: null },
        { section, figure: 'service / bare', value: `${fmt(ratioBare)}×`, baseline: 'bare route', target: '≥ 0.9×', pass: haveService ? ratioBare >= 0.9 : null },
        { section, figure: 'service / Cedar (preparsed)', value: `${fmt(ratioCedar)}×`, baseline: 'Cedar preparsed', target: '≥ 2.5×', pass: haveService ? ratioCedar >= 2.5 : null },
        { section, figure: 'service / Cedar (policy text)', value: `${fmt(ratioCedarText)}×`, baseline: 'Cedar isAuthorized', target: '≥ 2.5×', pass: haveService ? ratioCedarText >= 2.5 : null },
      ],
      raw: Object.fromEntries(results),
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(root, { recursive: true, force: true });
  }
}
