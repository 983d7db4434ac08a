import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSanctionsList, watchSanctionsList } from '../../src/sanctions/list.ts';
import { memoryLogger } from '../helpers/logger.ts';
import { createMetrics } from '../../src/lib/metrics.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { tempDir } from '../helpers/app.ts';

const A = '0x' + 'a1'.repeat(20);
const B = '0x' + 'b2'.repeat(20);
const C = '0x' + 'c3'.repeat(20);

const logs = (l: { lines: string[] }) => l.lines.map((x) => JSON.parse(x) as Record<string, unknown>);

async function until(what: string, fn: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a changed file is picked up by the periodic check; an empty or garbled one keeps the last good list', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'sdn.txt');
  writeFileSync(path, `${A}\n`);
  const list = loadSanctionsList({ path });
  const logger = memoryLogger();
  const metrics = createMetrics();
  const watch = watchSanctionsList(list, { logger, clock: systemClock, metrics, intervalMs: 20 });
  watch.start();
  t.after(() => watch.stop());

  writeFileSync(path, `${A}\n${B}\n`);
  await until('the changed file', () => list.has(B));
  assert.equal(list.status().count, 2);
  assert.ok(logs(logger).some((l) => l.msg === 'sanctions list reloaded' && l.reason === 'file_changed'));

  // Truncated to nothing (a failed download): screening keeps both addresses.
  writeFileSync(path, '');
  await until('the warning', () =>
    logs(logger).some((l) => l.level === 'warn' && /holds no addresses/.test(String(l.error))),
  );
  assert.ok(list.has(A) && list.has(B));
  assert.deepEqual([list.status().listLoaded, list.status().count], [true, 2]);
  // Garbled (not a list, not SDN XML): the same.
  writeFileSync(path, 'Error 503: service unavailable\n');
  utimesSync(path, new Date(), new Date(Date.now() + 5_000));
  await until('the second warning', () => logs(logger).filter((l) => l.level === 'warn').length >= 2);
  assert.ok(list.has(B));
  // The bad version warns once, not on every tick.
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(logs(logger).filter((l) => l.level === 'warn').length, 2);

  writeFileSync(path, `${C}\n`);
  await until('the repaired file', () => list.has(C));
  assert.ok(!list.has(A), 'a good file replaces the list, it does not add to it');
  const text = metrics.render();
  assert.match(text, /isocast_sanctions_list_addresses 1\n/);
  assert.match(text, /isocast_sanctions_list_age_seconds \d+\n/);
  assert.match(text, /isocast_sanctions_reloads_total\{reason="file_changed",result="kept_previous"\} 2\n/);
  assert.match(text, /isocast_sanctions_reloads_total\{reason="file_changed",result="ok"\} 2\n/);
});

test('an empty file at start is not a loaded list', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'sdn.txt');
  writeFileSync(path, '# comments only\n');
  const list = loadSanctionsList({ path });
  assert.equal(list.status().listLoaded, false);
  assert.match(list.loadError ?? '', /holds no addresses/);
  assert.equal(list.available({ required: true }), false);
});
