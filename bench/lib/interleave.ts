/**
 * Interleaved throughput runs: every target gets a warm-up, then the rounds go A B C, C B A, ...
 * so that drift of the machine and position in the round affect every target alike; with
 * {@link forkedInterleavedLoad}, on fresh server processes every round.
 */
import type { DecideQuery } from '../../schemas/index.js';
import type { BenchContext } from './context.js';
import { runLoad, type LoadResult } from './load.js';
import { cpuTimeMs } from './processes.js';
import { fmt } from './stats.js';

export interface LoadTarget {
  name: string;
  origin: string;
  bodies: readonly DecideQuery[];
  /** Server process id: its CPU time is read around each run. */
  pid: number;
}

/** One measured run: the load generator's view plus the server's CPU cost per request. */
export interface RoundResult extends LoadResult {
  /** Server CPU time (user + system, all threads) per answered request, in µs. */
  cpuUsPerRequest: number;
  /** The part of it spent outside the main thread (GC helpers, libuv pool), in µs. */
  offMainUsPerRequest: number;
}

/** One measured run of a target (after its re-warm): the load generator's view and the server's CPU per request. */
async function measure(ctx: BenchContext, target: LoadTarget): Promise<RoundResult> {
  const { settings } = ctx;
  // A server that sat idle while the others ran lets V8 shrink its young generation and cool
  // its caches: one short unmeasured run right before each measured one puts every server in
  // the same (hot) state, whatever its place in the order.
  if (settings.rewarmSec > 0) {
    await runLoad(ctx.generator, {
      origin: target.origin,
      bodies: target.bodies,
      connections: settings.connections,
      durationSec: settings.rewarmSec,
    });
  }
  const cpuBefore = await cpuTimeMs(target.pid);
  const load = await runLoad(ctx.generator, {
    origin: target.origin,
    bodies: target.bodies,
    connections: settings.connections,
    durationSec: settings.durationSec,
  });
  const cpuAfter = await cpuTimeMs(target.pid);
  const requests = Math.max(1, load.requests);
  const cpuUsPerRequest = ((cpuAfter.total - cpuBefore.total) * 1000) / requests;
  const mainUsPerRequest = ((cpuAfter.main - cpuBefore.main) * 1000) / requests;
  return { ...load, cpuUsPerRequest, offMainUsPerRequest: cpuUsPerRequest - mainUsPerRequest };
}

function logRound(ctx: BenchContext, round: number, name: string, result: RoundResult): void {
  ctx.log(
    `  round ${round + 1}/${ctx.settings.rounds} ${name.padEnd(14)} ${fmt(result.requestsPerSec, 'req/s')}  ${fmt(result.cpuUsPerRequest, 'µs CPU/req')} (${fmt(result.offMainUsPerRequest, 'µs')} off main thread)  avg ${fmt(result.latencyAvgMs, 'ms')}  errors ${result.errors}`,
  );
  if (result.errors > 0) ctx.note(`${name}: ${result.errors} non-2xx/socket errors in round ${round + 1} (figure not trustworthy).`);
}

const warmUp = (ctx: BenchContext, target: LoadTarget): Promise<LoadResult> =>
  runLoad(ctx.generator, {
    origin: target.origin,
    bodies: target.bodies,
    connections: ctx.settings.connections,
    durationSec: ctx.settings.warmupSec,
  });

/** Runs the interleaved rounds on long-lived servers; returns every target's per-round results in round order. */
export async function interleavedLoad(ctx: BenchContext, targets: readonly LoadTarget[]): Promise<Map<string, RoundResult[]>> {
  const results = new Map<string, RoundResult[]>(targets.map((target) => [target.name, []]));
  for (const target of targets) await warmUp(ctx, target);
  for (let round = 0; round < ctx.settings.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const result = await measure(ctx, target);
      results.get(target.name)!.push(result);
      logRound(ctx, round, target.name, result);
    }
  }
  return results;
}

/** A server process of one round of {@link forkedInterleavedLoad}. */
export interface ForkedServer {
  readonly origin: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** A target of {@link forkedInterleavedLoad}: how to start a fresh process of it. */
export interface ForkedTarget<Server extends ForkedServer = ForkedServer> {
  name: string;
  bodies: readonly DecideQuery[];
  start(): Promise<Server>;
}

/**
 * {@link interleavedLoad} with a fresh process of every target in every round (what JMH calls
 * forks). A process can settle for its whole life in a state that costs it up to twice the CPU per
 * request (seen natively in 2 of 22 fresh service processes: scavenges copying far more survivors
 * than in the others), so a comparison of one process of each server is partly a draw; with a
 * fresh set per round, such a process spoils one round and the median over the rounds sets it
 * aside. `onStart` runs on each fresh set before its warm-up.
 */
export async function forkedInterleavedLoad<Server extends ForkedServer>(
  ctx: BenchContext,
  targets: readonly ForkedTarget<Server>[],
  onStart?: (servers: ReadonlyMap<string, Server>) => Promise<void>,
  /** Runs on the last round's servers after their measured runs, before they stop. */
  afterLastRound?: (servers: ReadonlyMap<string, Server>) => Promise<void>,
): Promise<Map<string, RoundResult[]>> {
  const results = new Map<string, RoundResult[]>(targets.map((target) => [target.name, []]));
  for (let round = 0; round < ctx.settings.rounds; round += 1) {
    const servers = new Map<string, Server>();
    try {
      for (const target of targets) servers.set(target.name, await target.start());
      await onStart?.(servers);
      const live = targets.map((target) => ({
        name: target.name,
        bodies: target.bodies,
        origin: servers.get(target.name)!.origin,
        pid: servers.get(target.name)!.pid,
      }));
      for (const target of live) await warmUp(ctx, target);
      const order = round % 2 === 0 ? live : [...live].reverse();
      for (const target of order) {
        const result = await measure(ctx, target);
        results.get(target.name)!.push(result);
        logRound(ctx, round, target.name, result);
      }
      if (round === ctx.settings.rounds - 1) await afterLastRound?.(servers);
    } finally {
      await Promise.all([...servers.values()].map((server) => server.stop()));
    }
  }
  return results;
}

export const rpsOf = (results: readonly RoundResult[]): number[] => results.map((result) => result.requestsPerSec);

/**
 * Requests per CPU-second of the server (1e6 / µs per request): throughput as it would be if the
 * server had a core to itself. Much less sensitive than req/s to other work on a shared machine.
 */
export const cpuRpsOf = (results: readonly RoundResult[]): number[] => results.map((result) => 1e6 / result.cpuUsPerRequest);
