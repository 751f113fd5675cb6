/**
 * What waking another process costs on this machine: a parent and a child process pass one byte
 * back and forth over pipes, the parent first spinning `gap` µs so that the child's CPU sits idle
 * that long. On bare metal the round trip barely moves with the gap; on a virtual machine whose
 * idle vCPU halts, a wake after a long idle pays the hypervisor's wake-up, in the writer's
 * `write()` and in the reader's latency. `idea-mcp-proxy` adds one such process, asleep through
 * every decision, to each `tools/call` (bench/README.md, "Why the proxy's call gap stays").
 *
 * `npx tsx bench/wake-cost.ts [--rounds=N]`; pin both processes to one CPU with `taskset -c 0`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { quantile } from './lib/stats.js';

const ECHO = "process.stdin.on('data', (b) => { process.stdout.write(b); });";
const GAPS_US = [0, 50, 100, 200, 500];
const roundsArg = process.argv.find((arg) => arg.startsWith('--rounds='));
const ROUNDS = roundsArg === undefined ? 5000 : Number(roundsArg.slice('--rounds='.length));

function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until) {
    // Busy on purpose: this CPU stays awake while the child's sleeps.
  }
}

const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
const { stdin, stdout } = child;
const byte = Buffer.from('x');
const rows: string[] = [];
for (const gap of GAPS_US) {
  const roundTrips: number[] = [];
  const writes: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    spin(gap);
    const answered = once(stdout, 'data');
    const started = performance.now();
    stdin.write(byte);
    const written = performance.now();
    await answered;
    roundTrips.push((performance.now() - started) * 1000);
    writes.push((written - started) * 1000);
  }
  const p50 = (values: number[]) => quantile(values, 0.5).toFixed(1).padStart(7);
  rows.push(`${String(gap).padStart(6)} µs ${p50(roundTrips)} µs ${p50(writes)} µs`);
}
stdin.end();
await once(child, 'exit');
process.stdout.write(`idle gap   round trip p50   write() p50   (${String(ROUNDS)} each)\n${rows.join('\n')}\n`);
