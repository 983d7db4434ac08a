import { setTimeout as sleep } from 'node:timers/promises';
import type { SignalPublic } from '../../signals/schemas.ts';

/** `--json` prints JSON lines on stdout and notes on stderr, so a script can pipe stdout to a JSON-lines reader. */
export type CliIo = {
  stdout(line: string): void;
  stderr(line: string): void;
  envKey?: string;
  envServer?: string;
  nowMs?(): number;
  /** Resolves after ms, or early when `signal` aborts. */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops `read --follow` (main.ts wires it to SIGINT/SIGTERM). */
  signal?: AbortSignal;
  stateHome?: string;
  /** Asks the person at the terminal; absent when there is none (then `buy` proceeds after its checks). */
  confirm?(question: string): Promise<boolean>;
};

/** Exit codes: 0 done, 1 failure, 2 usage, 3 payment needed (bundle used up or no receipt). */
export const EXIT = { ok: 0, failure: 1, usage: 2, paymentNeeded: 3 } as const;

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.failure) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

const deg = (r: SignalPublic['old']) => `${r.reading}°${r.unit}`;

/** `#3 nyc 2026-07-15  40-41°F -> 44-45°F  (41°F -> 44°F at 19:52Z)  odds 44-45°F 0.62, ...  <url>` */
export function formatSignal(s: SignalPublic): string {
  // A noQuote bucket's yes of 1 is the empty book's bound, not a price: never among the likeliest.
  const odds = (s.buckets ?? [])
    .filter((b) => !b.dead && !b.noQuote)
    .sort((a, b) => b.yes - a.yes)
    .slice(0, 3)
    .map((b) => `${b.label} ${b.yes.toFixed(2)}`)
    .join(', ');
  const at = s.observedAt.slice(11, 16) + 'Z';
  return (
    `#${s.seq} ${s.city} ${s.targetDate}  ${s.old.bucket ?? '?'} -> ${s.new.bucket ?? '?'}  (${deg(s.old)} -> ${deg(s.new)} at ${at})` +
    `${odds ? `  odds ${odds}` : ''}  ${s.marketUrl}`
  );
}

export function withoutDisclaimer<T extends Record<string, unknown>>(o: T): Omit<T, 'disclaimer'> {
  const { disclaimer: _d, ...rest } = o;
  return rest;
}

export const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => {});

/** Only when a person can answer (stdin and stderr are terminals): a yes/no on stderr, only "y"/"yes" is yes. */
export function terminalConfirm(): ((q: string) => Promise<boolean>) | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async (question) => {
    // readline loads only when a question is asked.
    const { createInterface } = process.getBuiltinModule('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^(y|yes)$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  };
}
