/**
 * Turns the benchmark's figures into bench/results.md and the README's performance table.
 * A row with a target passes or fails; a row without one is a measurement shown for context.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export type Row = {
  figure: string;
  measured: string;
  ceiling: string;
  /** measured / ceiling (or the row's own definition, given in `figure`); null when not a ratio. */
  ratio: number | null;
  /** `>= 0.7`, `<= 1.25`, or null for context rows. */
  target: string | null;
  pass: boolean | null;
};

export function passes(ratio: number, target: string): boolean {
  const [op, value] = target.split(' ') as [string, string];
  return op === '>=' ? ratio >= Number(value) : ratio <= Number(value);
}

export function table(rows: readonly Row[]): string {
  const lines = ['| figure | measured | ceiling | ratio | target | result |', '|---|---|---|---|---|---|'];
  for (const r of rows) {
    const result = r.pass === null ? '' : r.pass ? 'pass' : '**fail**';
    lines.push(
      `| ${r.figure} | ${r.measured} | ${r.ceiling} | ${r.ratio === null ? '' : r.ratio.toFixed(2)} | ${r.target ?? ''} | ${result} |`,
    );
  }
  return lines.join('\n');
}

export const README_START = '<!-- bench:start (written by npm run bench) -->';
export const README_END = '<!-- bench:end -->';

/** Replaces the marked region of the README, if the markers are there; never touches the rest. */
export function updateReadme(path: string, block: string): boolean {
  if (!existsSync(path)) return false;
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(README_START);
  const b = text.indexOf(README_END);
  if (a === -1 || b < a) return false;
  writeFileSync(path, text.slice(0, a + README_START.length) + '\n' + block + '\n' + text.slice(b));
  return true;
}
