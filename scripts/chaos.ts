import { parseArgs } from 'node:util';
import { runChaos } from '../test/chaos/run.ts';
import { formatTable } from '../test/chaos/invariants.ts';
import { drillLine, runReplicaDrill } from '../test/chaos/replica-drill.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `npm run chaos [-- --rounds N --seed S --keep --only mock|settlement]`: kill -9 the server at
 * random instants under a mixed load, restart it on the same DATA_DIR, repeat, then check the
 * invariants (docs/reliability.md). Then the same with settlement faults (issue 12): live
 * facilitator mode over a fake facilitator and a fake chain, SIGKILL and SIGTERM mid-settle, and
 * the money invariants against the chain. Then a machine-loss round (issue 26): purchases against
 * a serve replicating with Litestream, kill -9 of the whole process tree, DATA_DIR deleted,
 * `isocast restore`, start (`--only replica` runs just that). Exit 0 when every invariant holds.
 */
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write('usage: node scripts/chaos.ts [--rounds N] [--seed S] [--keep]\n');
  process.exit(2);
}
const seed = values.seed === undefined ? undefined : Number(values.seed);
let allOk = true;
for (const faults of [false, true]) {
  if (values.only === 'replica' || values.only === (faults ? 'mock' : 'settlement')) continue;
  process.stdout.write(
    faults
      ? `\nisocast chaos, settlement faults: ${rounds} rounds of SIGKILL or SIGTERM mid-settle, a facilitator that transfers and then goes quiet or fails\n`
      : `isocast chaos: ${rounds} rounds of SIGKILL under load\n`,
  );
  const report = await runChaos({
    rounds,
    seed,
    keepDir: values.keep,
    settlementFaults: faults,
    log: (l) => process.stdout.write(`${l}\n`),
  });
  const s = report.stats;
  process.stdout.write(
    `\nseed ${report.seed}; ${report.kills.length} stops at ${report.kills.map((k) => `${k.afterMs}${k.exit === '0' ? 'T' : ''}`).join(', ')} ms (T: SIGTERM)\n`,
  );
  process.stdout.write(
    `load: ${s.requests} requests (${s.cutOff} cut off), ${s.payments} distinct authorizations (+${s.sameNonceRebuys} same-salt rebuys), ${s.duplicateCopies} duplicate/concurrent copies, ` +
      `${s.reads} receipt reads, ${s.moves} temperature moves (highs up, lows down), ${s.registrations} chat registrations\n`,
  );
  if (report.settlement) {
    const m = report.settlement;
    process.stdout.write(
      `settlement: ${report.rounds} rounds, ${m.transfers} transfers on chain, ${m.applied} applied, ${m.refunded} refunded, ${m.inDoubtLeft} in doubt left, ` +
        `${m.failed} failed (not charged), ${m.inDoubtAnswers} "settlement pending" answers, false "not charged": ${m.falseNotCharged}\n`,
    );
    process.stdout.write(
      `/settle behaviours: ${Object.entries(m.settleCalls)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}\n`,
    );
  }
  process.stdout.write(`signals: ${report.signals.high} on high streams, ${report.signals.low} on low streams\n`);
  process.stdout.write(`\n${formatTable(report.checks)}\n\n`);
  process.stdout.write(
    `${report.ok ? 'ALL INVARIANTS HOLD' : 'INVARIANT VIOLATED'} after ${(report.elapsedMs / 1000).toFixed(1)} s${values.keep ? `; data kept in ${report.dataDir}` : ''}\n`,
  );
  allOk &&= report.ok;
}
if (values.only === undefined || values.only === 'replica') {
  process.stdout.write(
    '\nisocast chaos, machine loss: purchases, kill -9 of serve and Litestream, DATA_DIR deleted, restore, start\n',
  );
  const root = mkdtempSync(join(tmpdir(), 'isocast-chaos-replica-'));
  const r = await runReplicaDrill({
    root,
    loadMs: 15_000,
    minPurchases: 50,
    maxLoadMs: 60_000,
    buyers: 8,
    log: (l) => process.stdout.write(`${l}\n`),
  });
  const ok = r.lostHeld === 0 && r.doubled === 0 && r.entitlementsEqual && r.signalsEqual && r.problems.length === 0;
  process.stdout.write(
    `${drillLine(r)}\n${r.problems.join('\n')}${ok ? 'MACHINE LOSS: NOTHING THE REPLICA HELD LOST, NOTHING DOUBLED' : 'MACHINE LOSS: INVARIANT VIOLATED'}\n`,
  );
  if (values.keep) process.stdout.write(`data kept in ${root}\n`);
  else rmSync(root, { recursive: true, force: true });
  allOk &&= ok;
}
process.exit(allOk ? 0 : 1);
