/**
 * Counts the raw SQL sites per table in src/: a site is one SQL statement literal (what one
 * db.prepare gets), and it touches a table when the table follows FROM, JOIN, INTO or UPDATE.
 * A statement writes the table it inserts into, updates or deletes from, and reads the others.
 * The tables are the ones schema.sql creates. Issue 17 wants one module per table; this prints
 * how far the tree is from that.
 * Usage: node scripts/sql-sites.ts [--json] [--detail]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export type TableSites = { table: string; modules: string[]; sites: number; reads: number; writes: number };

const VERB = /^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH)\b/;
const LITERAL = /`(?:[^`\\]|\\.)*`|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g;
const TOUCH = /\b(FROM|JOIN|INTO|UPDATE)\s+([a-z_]+)/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

export function schemaTables(root: string): string[] {
  const ddl = readFileSync(join(root, 'schema.sql'), 'utf8');
  return [...ddl.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].map((m) => m[1]!);
}

export function sqlSites(root: string): TableSites[] {
  const tables = schemaTables(root);
  const by = new Map<string, { modules: Set<string>; sites: number; reads: number; writes: number }>(
    tables.map((t) => [t, { modules: new Set(), sites: 0, reads: 0, writes: 0 }]),
  );
  for (const file of tsFiles(join(root, 'src'))) {
    const module = relative(join(root, 'src'), file);
    for (const lit of readFileSync(file, 'utf8').match(LITERAL) ?? []) {
      const sql = lit.slice(1, -1);
      const verb = VERB.exec(sql)?.[1];
      if (verb === undefined) continue;
      const touched = new Map<string, boolean>();
      for (const [, keyword, table] of sql.matchAll(TOUCH)) {
        if (!by.has(table!)) continue;
        const write =
          keyword === 'INTO' ||
          keyword === 'UPDATE' ||
          (keyword === 'FROM' && /DELETE\s+$/.test(sql.slice(0, sql.indexOf(`FROM ${table}`))));
        touched.set(table!, (touched.get(table!) ?? false) || write);
      }
      for (const [table, write] of touched) {
        const t = by.get(table)!;
        t.modules.add(module);
        t.sites++;
        if (write) t.writes++;
        else t.reads++;
      }
    }
  }
  return tables.map((table) => {
    const t = by.get(table)!;
    return { table, modules: [...t.modules].sort(), sites: t.sites, reads: t.reads, writes: t.writes };
  });
}

if (import.meta.main) {
  const rows = sqlSites(join(import.meta.dirname, '..'));
  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  } else {
    const detail = process.argv.includes('--detail');
    process.stdout.write('table                   modules  sites  reads  writes\n');
    for (const r of rows) {
      const line =
        `${r.table.padEnd(24)}${String(r.modules.length).padStart(7)}${String(r.sites).padStart(7)}` +
        `${String(r.reads).padStart(7)}${String(r.writes).padStart(8)}`;
      process.stdout.write(`${line}${detail ? `  ${r.modules.join(', ')}` : ''}\n`);
    }
    const all = rows.reduce((n, r) => n + r.sites, 0);
    const multi = rows.filter((r) => r.modules.length > 1).length;
    process.stdout.write(
      `${all} table touches in ${rows.length} tables; ${multi} tables touched from more than one module\n`,
    );
  }
}
