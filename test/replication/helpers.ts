import { readdirSync, readFileSync } from 'node:fs';

/** Live processes under `pid` whose command line mentions `name`, from /proc. */
export function processesUnder(pid: number, name: string): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) {
      if (pp !== p) continue;
      try {
        if (readFileSync(`/proc/${c}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(name)) out.push(c);
      } catch {
        /* gone */
      }
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function walSalt(path: string): string | null {
  try {
    return readFileSync(path).subarray(16, 24).toString('hex');
  } catch {
    return null;
  }
}
