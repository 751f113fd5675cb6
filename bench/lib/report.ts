/**
 * The benchmark report: one row per figure with its target and verdict, rendered as a console
 * table, Markdown, and JSON (with the raw per-round samples and the machine description).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface Row {
  /** Which measurement the row belongs to (throughput, latency, ...). */
  section: string;
  /** What is measured, in words. */
  figure: string;
  /** The measured value, formatted with its unit. */
  value: string;
  /** What the value is compared with, when it is a ratio. */
  baseline?: string;
  /** The target in words (e.g. "≥ 0.9×"); empty for context rows. */
  target: string;
  /** PASS/FAIL for rows with a target, null for context rows. */
  pass: boolean | null;
}

/** The part of a profile summary the Markdown shows. */
export interface ProfileDigest {
  label: string;
  totalMs: number;
  requests?: number;
  topFunctions: { name: string; where: string; selfMs: number; percent: number }[];
  byPackage: { name: string; selfMs: number; percent: number }[];
}

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  /** 1-minute load average when the run started and ended: other work on the machine adds noise. */
  loadAverage: { start: number; end: number };
}

export interface Report {
  date: string;
  machine: Machine;
  generator: string;
  serviceBuild: string;
  settings: Record<string, unknown>;
  rows: Row[];
  notes: string[];
  /** CPU profile summaries when `--profile` was given. */
  profiles?: ProfileDigest[];
  /** Raw samples per section, for anyone re-deriving the figures. */
  raw: Record<string, unknown>;
}

/** The machine; `loadAtStart` is `os.loadavg()[0]` sampled before the first measurement. */
export function describeMachine(loadAtStart: number): Machine {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    node: process.version,
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] ?? Number.NaN },
  };
}

const verdict = (row: Row): string => (row.pass === null ? '' : row.pass ? 'PASS' : 'FAIL');

/** Plain-text table for the terminal. */
export function renderTable(rows: readonly Row[]): string {
  const header = ['section', 'figure', 'value', 'vs', 'target', 'result'];
  const cells = rows.map((row) => [row.section, row.figure, row.value, row.baseline ?? '', row.target, verdict(row)]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}

function markdownRow(values: readonly string[]): string {
  return `| ${values.map((value) => value.replaceAll('|', '\\|')).join(' | ')} |`;
}

/** The Markdown version committed as `bench/results/latest.md`. */
export function renderMarkdown(report: Report): string {
  const { machine } = report;
  const lines = [
    '# Benchmark results',
    '',
    `- Date: ${report.date}`,
    `- Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}`,
    `- Node: ${machine.node}`,
    `- 1-min load average: ${machine.loadAverage.start.toFixed(2)} at start, ${machine.loadAverage.end.toFixed(2)} at end`,
    `- Load generator: ${report.generator}`,
    `- Service under test: ${report.serviceBuild}`,
    `- Settings: ${Object.entries(report.settings)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(', ')}`,
    '',
    markdownRow(['section', 'figure', 'value', 'vs', 'target', 'result']),
    markdownRow(['---', '---', '---:', '---', '---', '---']),
    ...report.rows.map((row) => markdownRow([row.section, row.figure, row.value, row.baseline ?? '', row.target, verdict(row)])),
  ];
  if (report.notes.length > 0) lines.push('', '## Notes', '', ...report.notes.map((note) => `- ${note}`));
  for (const profile of report.profiles ?? []) {
    const perRequest = (ms: number): string => (profile.requests ? `${((ms * 1000) / profile.requests).toFixed(2)} µs` : '');
    lines.push(
      '',
      `## Profile: ${profile.label}`,
      '',
      `${profile.totalMs.toFixed(0)} ms of busy samples${profile.requests ? ` for ${profile.requests} requests` : ''}; self time.`,
      '',
      markdownRow(['package', 'share', 'per request']),
      markdownRow(['---', '---:', '---:']),
      ...profile.byPackage.slice(0, 8).map((entry) => markdownRow([entry.name, `${entry.percent.toFixed(1)}%`, perRequest(entry.selfMs)])),
      '',
      markdownRow(['function', 'where', 'share', 'per request']),
      markdownRow(['---', '---', '---:', '---:']),
      ...profile.topFunctions
        .slice(0, 12)
        .map((entry) => markdownRow([entry.name, entry.where, `${entry.percent.toFixed(1)}%`, perRequest(entry.selfMs)])),
    );
  }
  lines.push('', 'Reproduce with `npm run bench` (see `bench/README.md`).', '');
  return lines.join('\n');
}

/** Writes `latest.json` and `latest.md` into `folder`. */
export async function writeReport(folder: string, report: Report): Promise<void> {
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(path.join(folder, 'latest.md'), renderMarkdown(report));
}
