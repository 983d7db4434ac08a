/** A yes/no question on the terminal (stderr, so stdout stays clean for pipes); only "y"/"yes" is yes. */
async function ttyConfirm(question: string): Promise<boolean> {
  // Loaded here, not at import: main.ts imports this module, and `serve` never asks (about 1.4 ms of a start).
  const { createInterface } = process.getBuiltinModule('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^(y|yes)$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** Only when a person can answer: both stdin and stderr are terminals. */
export function terminalConfirm(): ((q: string) => Promise<boolean>) | undefined {
  return process.stdin.isTTY && process.stderr.isTTY ? ttyConfirm : undefined;
}
