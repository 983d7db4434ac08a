import { parseArgs } from 'node:util';
import { runChaos } from '../test/chaos/run.ts';
import { formatTable } from '../test/chaos/invariants.ts';

/**
 * `npm run chaos [-- --rounds N --seed S --keep]`: kill -9 the server at random instants under a
 * mixed load, restart it on the same DATA_DIR, repeat, then check the invariants (docs/reliability.md).
 * Exit 0 when every invariant holds, 1 otherwise.
 */
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write('usage: node scripts/chaos.ts [--rounds N] [--seed S] [--keep]\n');
  process.exit(2);
}
const seed = values.seed === undefined ? undefined : Number(values.seed);
process.stdout.write(`isocast chaos: ${rounds} rounds of SIGKILL under load\n`);
const report = await runChaos({ rounds, seed, keepDir: values.keep, log: (l) => process.stdout.write(`${l}\n`) });
const s = report.stats;
process.stdout.write(`\nseed ${report.seed}; ${report.kills.length} kills at ${report.kills.map((k) => k.afterMs).join(', ')} ms\n`);
process.stdout.write(`load: ${s.requests} requests (${s.cutOff} cut off), ${s.payments} distinct authorizations (+${s.sameNonceRebuys} same-window rebuys), ${s.duplicateCopies} duplicate/concurrent copies, `
  + `${s.reads} receipt reads, ${s.raises} temperature raises, ${s.registrations} chat registrations\n\n`);
process.stdout.write(`${formatTable(report.checks)}\n\n`);
process.stdout.write(`${report.ok ? 'ALL INVARIANTS HOLD' : 'INVARIANT VIOLATED'} after ${(report.elapsedMs / 1000).toFixed(1)} s${values.keep ? `; data kept in ${report.dataDir}` : ''}\n`);
process.exit(report.ok ? 0 : 1);
