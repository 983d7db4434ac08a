/// <reference types="node" />
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The MCP server's daily spending cap (ISOCAST_MAX_USD_PER_DAY). The cap comes from the person
 * who configured the host, never from a server's answer, and what was spent is kept in a file in
 * the state directory, so restarting the MCP server (the host does that freely) does not reset it.
 * Amounts are integer micro-USDC per UTC day; the file holds only today's total.
 *
 * A payment is reserved before its signed header leaves this process and released only when the
 * server's answer says nothing was charged: a crash or a lost answer counts as spent, so the cap
 * errs toward refusing, never toward overspending.
 */
export type SpendState = { day: string; spentMicro: number };

/** The UTC calendar day of an instant, `YYYY-MM-DD`. */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** What is spent on `nowMs`'s day: yesterday's total does not count today. */
export function spentOn(state: SpendState | null, nowMs: number): number {
  return state && state.day === utcDay(nowMs) ? state.spentMicro : 0;
}

/** Why `priceMicro` may not be paid now under `capMicro`, or null when it may. */
export function capProblem(o: {
  state: SpendState | null;
  nowMs: number;
  capMicro: number;
  priceMicro: number;
}): string | null {
  const spent = spentOn(o.state, o.nowMs);
  if (spent + o.priceMicro <= o.capMicro) return null;
  return (
    `this bundle costs ${usd(o.priceMicro)} USDC; with ${usd(spent)} USDC already paid today (UTC) it would pass the ` +
    `daily cap of ${usd(o.capMicro)} USDC (ISOCAST_MAX_USD_PER_DAY); nothing was signed`
  );
}

/** The state after adding `deltaMicro` (negative releases a reservation) on `nowMs`'s day. */
export function addSpend(state: SpendState | null, o: { nowMs: number; deltaMicro: number }): SpendState {
  return { day: utcDay(o.nowMs), spentMicro: Math.max(0, spentOn(state, o.nowMs) + o.deltaMicro) };
}

/** micro-USDC as a plain decimal: 100000 -> "0.1". */
export function usd(micro: number): string {
  const whole = Math.floor(micro / 1_000_000);
  const frac = String(micro % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : String(whole);
}

/** `1`, `0.25`, `$2.50` -> micro-USDC; null when it is not a plain non-negative decimal. */
export function usdToMicro(raw: string): number | null {
  const m = /^\$?(\d{1,9})(?:\.(\d{1,6}))?$/.exec(raw.trim());
  if (!m) return null;
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? '').padEnd(6, '0'));
}

export function spendFile(stateHome: string): string {
  return join(stateHome, 'isocast', 'mcp-spend.json');
}

/** The saved state; a missing file is nothing spent, a damaged one is refused (it may hide spending). */
export function loadSpend(file: string): SpendState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const v = JSON.parse(text) as Partial<SpendState>;
  if (typeof v.day !== 'string' || !Number.isSafeInteger(v.spentMicro) || (v.spentMicro as number) < 0)
    throw new Error(`${file} is not a spending record; fix or remove it`);
  return { day: v.day, spentMicro: v.spentMicro as number };
}

/** Written whole (temp file, then rename) and private to the user, as the CLI's receipts are. */
export function saveSpend(file: string, state: SpendState): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
