/**
 * What waking another process costs on this machine: a parent and a child process pass one byte
 * back and forth over pipes, the parent first spinning `gap` µs so that the child's CPU sits idle
 * that long. On bare metal the round trip barely moves with the gap; on a virtual machine whose
 * idle vCPU halts, a wake after a long idle pays the hypervisor's wake-up, in the writer's
 * `write()` and in the reader's latency (bench/README.md#why-the-proxys-call-gap-stays).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { quantile } from './stats.js';

const ECHO = "process.stdin.on('data', (b) => { process.stdout.write(b); });";

export interface WakeCost {
  /** How long the child's CPU sat idle before each round trip, in µs. */
  readonly gapUs: number;
  readonly roundTripP50Us: number;
  /** The parent's `write()` alone: the kernel's (and hypervisor's) share of waking the child. */
  readonly writeP50Us: number;
}

function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until) {
    // Busy on purpose: this CPU stays awake while the child's sleeps.
  }
}

/** Round trips of one byte to a child process after each idle gap, `rounds` per gap. */
export async function measureWakeCost(gapsUs: readonly number[], rounds: number): Promise<WakeCost[]> {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  const { stdin, stdout } = child;
  const byte = Buffer.from('x');
  const costs: WakeCost[] = [];
  try {
    for (const gapUs of gapsUs) {
      const roundTrips: number[] = [];
      const writes: number[] = [];
      for (let i = 0; i < rounds; i += 1) {
        spin(gapUs);
        const answered = once(stdout, 'data');
        const started = performance.now();
        stdin.write(byte);
        const written = performance.now();
        await answered;
        roundTrips.push((performance.now() - started) * 1000);
        writes.push((written - started) * 1000);
      }
      costs.push({ gapUs, roundTripP50Us: quantile(roundTrips, 0.5), writeP50Us: quantile(writes, 0.5) });
    }
  } finally {
    stdin.end();
    await once(child, 'exit');
  }
  return costs;
}
