import { execFile } from 'node:child_process';

/**
 * `node src/main.ts <args>` as its own process, awaited instead of blocking this one, so the
 * usage and refusal checks of one test can run side by side. Each child spends most of its life
 * starting Node and loading the TypeScript; the answer is the same as spawnSync's.
 */
export type MainRun = { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

export function runMain(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<MainRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['src/main.ts', ...args],
      { env: opts.env ?? process.env, encoding: 'utf8', timeout: opts.timeoutMs ?? 0 },
      (_err, stdout, stderr) => resolve({ status: child.exitCode, signal: child.signalCode, stdout, stderr }),
    );
  });
}

/** Each task's answer in the order given, with at most `limit` running at once. */
export async function inParallel<T>(tasks: (() => Promise<T>)[], limit = 3): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}
