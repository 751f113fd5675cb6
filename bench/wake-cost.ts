/**
 * Prints what waking another process costs on this machine after idle gaps of 0 to 500 µs
 * (bench/lib/wake-cost.ts). `idea-mcp-proxy` adds one such process, asleep through every
 * decision, to each `tools/call`.
 *
 * `npx tsx bench/wake-cost.ts [--rounds=N]`; pin both processes to one CPU with `taskset -c 0`.
 */
import { measureWakeCost } from './lib/wake-cost.js';

const roundsArg = process.argv.find((arg) => arg.startsWith('--rounds='));
const rounds = roundsArg === undefined ? 5000 : Number(roundsArg.slice('--rounds='.length));
const costs = await measureWakeCost([0, 50, 100, 200, 500], rounds);
const us = (value: number) => `${value.toFixed(1).padStart(7)} µs`;
const rows = costs.map((cost) => `${String(cost.gapUs).padStart(6)} µs ${us(cost.roundTripP50Us)} ${us(cost.writeP50Us)}`);
process.stdout.write(`idle gap   round trip p50   write() p50   (${String(rounds)} each)\n${rows.join('\n')}\n`);
