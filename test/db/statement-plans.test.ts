import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { openDb } from '../../src/db/open.ts';

/**
 * SQLite (3.54, as better-sqlite3 builds it) marks a bound parameter "re-prepare on bind" when the
 * planner looked at its value: a LIMIT or OFFSET, a LIKE/GLOB pattern, and an equality on a
 * statement that also orders (ORDER BY, min(), max()). better-sqlite3 binds every parameter on
 * every call, so such a statement is parsed and planned again on every execution: 3-5 µs in
 * isolation, and about 80 µs per purchase on the server's schema under load before it was found
 * (docs/performance.md, "Statements re-prepared on every call"). A unary plus (`= +?`,
 * `LIMIT +?`) hides the value from the planner without changing the comparison or the index used.
 */
const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every string or template literal in src/ that reads as SQL, with where it is. */
function sqlLiterals(): { where: string; sql: string }[] {
  const out: { where: string; sql: string }[] = [];
  for (const file of sourceFiles(join(root, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/`([^`]*)`|'((?:[^'\\\n]|\\.)*)'/g)) {
      const sql = m[1] ?? m[2] ?? '';
      if (!/^\s*(WITH|SELECT|INSERT|UPDATE|DELETE)\b/.test(sql)) continue;
      const line = text.slice(0, m.index).split('\n').length;
      out.push({ where: `${relative(root, file)}:${line}`, sql });
    }
  }
  return out;
}

const PARAM = String.raw`[?@:$]`;
const RULES: { why: string; bad: RegExp; applies?: RegExp }[] = [
  {
    why: 'LIMIT/OFFSET with a bare parameter (write LIMIT +?)',
    bad: new RegExp(String.raw`\b(LIMIT|OFFSET)\s+${PARAM}`),
  },
  { why: 'LIKE/GLOB with a bare parameter', bad: new RegExp(String.raw`\b(LIKE|GLOB)\s+${PARAM}`) },
  {
    why: 'an equality with a bare parameter in a statement that orders (write = +?)',
    bad: new RegExp(String.raw`(?<![<>!=])=\s*${PARAM}`),
    applies: /\bORDER BY\b|\b(min|max)\(/i,
  },
];

test('no statement in src/ is re-prepared on every call', () => {
  const literals = sqlLiterals();
  assert.ok(literals.length > 50, `found ${literals.length} SQL literals: the scan itself broke`);
  const offenders = literals.flatMap(({ where, sql }) =>
    RULES.filter((r) => (!r.applies || r.applies.test(sql)) && r.bad.test(sql)).map(
      (r) => `${where}: ${r.why}\n    ${sql.replace(/\s+/g, ' ').trim()}`,
    ),
  );
  assert.deepEqual(offenders, [], `statements SQLite would re-prepare on each bind:\n${offenders.join('\n')}`);
});

test('a unary plus keeps the index: the statements that use it still search, never scan', () => {
  const db = openDb(':memory:');
  try {
    const plussed = sqlLiterals().filter(({ sql }) => /\+\?/.test(sql) && !sql.includes('${'));
    assert.ok(plussed.length >= 8, `found ${plussed.length} statements with +?`);
    for (const { where, sql } of plussed) {
      const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
      const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
      const plan = (stmt.all(...params) as { detail: string }[]).map((r) => r.detail);
      // A plus on an equality must leave it usable by the index; a plus on LIMIT changes no plan.
      if (/=\s*\+\?/.test(sql)) {
        const table = /\bFROM\s+(\w+)/.exec(sql)![1]!;
        assert.ok(
          plan.some((d) => d.startsWith(`SEARCH ${table}`)) && !plan.some((d) => d.startsWith(`SCAN ${table}`)),
          `${where}: ${plan.join(' | ')}`,
        );
      }
    }
  } finally {
    db.close();
  }
});
