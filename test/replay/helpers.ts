import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createCatalog } from '../../src/cities/catalog.ts';
import { manualClock } from '../helpers/clock.ts';
import { replayCommand } from '../../src/replay/command.ts';
import type { ReplayUpstreams } from '../../src/replay/observations.ts';
import type { runReplay } from '../../src/replay/run.ts';

/** A file under test/replay/fixtures/. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export const NYC_LADDER = '65°F or below,66-67°F,68-69°F,70-71°F,72-73°F,74-75°F,76-77°F,78°F or higher';

type ReplayResult = ReturnType<typeof runReplay>;

export type ReplayRun = { code: number; stdout: string; stderr: string; json: ReplayResult | null };

/**
 * Runs the replay command in-process. `files` are in-memory files by name (days built inside a
 * test); other paths are read from disk. Without `upstreams` any fetch fails the test loudly, which
 * also proves a file-only replay never touches configuration or the network.
 */
export async function replay(
  argv: string[],
  opts: { files?: Record<string, string>; upstreams?: ReplayUpstreams; nowMs?: number } = {},
): Promise<ReplayRun> {
  let stdout = '';
  let stderr = '';
  const io: Parameters<typeof replayCommand>[1] = {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    readFile: (p) => opts.files?.[p] ?? readFileSync(p, 'utf8'),
    clock: manualClock(opts.nowMs ?? Date.parse('2026-11-21T12:00:00Z')),
    catalog: createCatalog(),
    upstreams: () => {
      if (!opts.upstreams) throw new Error('this replay was not supposed to fetch');
      return opts.upstreams;
    },
  };
  const code = await replayCommand(argv, io);
  let json: ReplayResult | null = null;
  if (code === 0 && argv.includes('--json')) json = JSON.parse(stdout) as ReplayResult;
  return { code, stdout, stderr, json };
}

/** The parts of a signal the poller and a replay must agree on. */
export const crossing = (s: {
  seq: number;
  old: { reading: number; bucket: string | null };
  new: { reading: number; bucket: string | null };
}) => ({ seq: s.seq, old: [s.old.reading, s.old.bucket], new: [s.new.reading, s.new.bucket] });

/** CSV text from `[iso time, temp, unit]` rows. */
export const csv = (rows: [string, number, 'C' | 'F'][]): string =>
  ['time,temp,unit', ...rows.map((r) => r.join(','))].join('\n');
