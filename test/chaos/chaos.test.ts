import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from './run.ts';
import { formatTable } from './invariants.ts';

/**
 * The short crash suite inside `npm test`: three rounds of SIGKILL under load against a real
 * server process serving each city's high and low stream, then every invariant (the full 20-round
 * run is `npm run chaos`).
 */
// The caps are hang guards, not speed checks: four starts of a real server (about 2 s of CPU each)
// and the poller's catch-up stretch on a loaded machine; beside four busy loops (load average 14
// to 21) the crash suite took 45-77 s and the settlement run 53-146 s.
test('crash suite: 3 rounds of kill -9 under load keep every invariant, for high and low streams', {
  timeout: 180_000,
}, async () => {
  const report = await runChaos({ rounds: 3, killAfterMs: [300, 1_500] });
  assert.ok(report.stats.payments > 0 && report.stats.moves > 0, 'the load ran');
  // Both kinds crossed: highs rising and lows falling on the same stations.
  assert.ok(report.signals.high > 0 && report.signals.low > 0, JSON.stringify(report.signals));
  assert.ok(report.ok, `seed ${report.seed}\n${formatTable(report.checks)}`);
});

test('settlement faults: 3 rounds of SIGKILL/SIGTERM mid-settle against a facilitator that transfers then fails keep the money invariants', {
  timeout: 240_000,
}, async () => {
  const report = await runChaos({ rounds: 3, killAfterMs: [500, 1_500], settlementFaults: true });
  assert.ok(report.settlement && report.settlement.transfers > 0, 'money moved');
  assert.equal(report.settlement.falseNotCharged, 0);
  assert.ok(report.ok, `seed ${report.seed}\n${formatTable(report.checks)}`);
});
