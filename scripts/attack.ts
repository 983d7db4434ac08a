import { parseArgs } from 'node:util';
import { formatTable, loadModules, moduleSession, type Row } from './attack/harness.ts';

/**
 * `npm run attack [-- --fast] [--module payments] [--only <text>] [--json]`: runs the attack cases
 * of scripts/attack/*.ts (issue 23), each module against its own real `isocast serve` on
 * 127.0.0.1 (mock payments), and prints `case | expected | observed | ok`. Exit code 1 when any
 * case is not ok. Not part of `npm test`; its fast cases are (test/attack/fast.test.ts).
 */
const { values } = parseArgs({
  options: {
    fast: { type: 'boolean', default: false },
    module: { type: 'string', multiple: true },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const rows: Row[] = [];
for (const mod of await loadModules(values.module)) {
  const cases = mod.cases.filter(
    (c) => (!values.fast || c.fast) && (!values.only || c.name.toLowerCase().includes(values.only.toLowerCase())),
  );
  if (cases.length === 0) continue;
  const session = await moduleSession();
  try {
    for (const c of cases) {
      const r = await session.run(c);
      rows.push({ module: mod.name, name: c.name, expected: c.expected, ...r });
      process.stderr.write(`${r.ok ? 'ok ' : 'NO '} ${mod.name}: ${c.name} (${Math.round(r.ms)} ms)\n`);
    }
  } finally {
    await session.close();
  }
}
console.log(values.json ? JSON.stringify(rows, null, 2) : formatTable(rows));
process.exitCode = rows.every((r) => r.ok) ? 0 : 1;
