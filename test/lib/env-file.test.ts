import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnvFile } from '../../src/lib/env-file.ts';
import { tempDir } from '../helpers/app.ts';

/** Cases from systemd.exec(5)'s EnvironmentFile= rules, where a shell would read them otherwise. */
const CASES = [
  'A=Bearer abc',
  'B="quoted  x" ',
  'C=x\\',
  'y',
  '#c',
  'D=  spaced  ',
  "E='sq x'",
  'F="a"b "c"',
  "G=it's",
  'H="esc \\" \\\\ \\` \\$ \\n"',
  'I=back\\slash  \\ ',
  ' J = k ',
  'K=unterminated"quote',
  ';semi=1',
  "L='multi",
  "line'",
  'M="multi',
  'line2"',
  '1BAD=x',
  '# comment \\',
  'O=swallowed',
  'P=tab\tinside\tend\t',
  'no equals sign here',
  '',
].join('\n');

test('EnvironmentFile rules: quotes, escapes, continuations, comments, whitespace', () => {
  assert.deepEqual(parseEnvFile(CASES), {
    A: 'Bearer abc',
    B: 'quoted  x',
    C: 'xy',
    D: 'spaced',
    E: 'sq x',
    F: 'ab "c"',
    G: "it's",
    H: 'esc " \\ ` $ \\n',
    I: 'backslash   ',
    J: 'k',
    K: 'unterminated"quote',
    L: 'multi\nline',
    M: 'multi\nline2',
    P: 'tab\tinside\tend',
  });
  assert.deepEqual(parseEnvFile('N=\nQ=1'), { N: '', Q: '1' });
  assert.deepEqual(parseEnvFile('R=last line without newline'), { R: 'last line without newline' });
});

/**
 * systemd's own parser, where it is installed: the user environment.d generator reads files with
 * the same code as EnvironmentFile= and prints the result (it expands $VAR, so the cases hold no
 * bare $). Its output quotes values with C-style escapes.
 */
const GENERATOR = '/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator';

test("agrees with systemd's own env-file parser (environment.d generator)", (t) => {
  if (!existsSync(GENERATOR)) {
    t.skip(`${GENERATOR} not installed (apt-get install systemd); the rules are checked above`);
    return;
  }
  const dir = tempDir(t);
  mkdirSync(join(dir, 'environment.d'));
  writeFileSync(join(dir, 'environment.d', 'cases.conf'), CASES);
  const r = spawnSync(GENERATOR, [], { env: { XDG_CONFIG_HOME: dir, HOME: dir }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const theirs: Record<string, string> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|(.*))$/.exec(line);
    if (!m) continue;
    const esc: Record<string, string> = { n: '\n', t: '\t', r: '\r' };
    theirs[m[1]!] = m[2] !== undefined ? m[2].replace(/\\(.)/g, (_, c: string) => esc[c] ?? c) : m[3]!;
  }
  const ours = parseEnvFile(CASES);
  for (const [k, v] of Object.entries(ours))
    assert.equal(theirs[k], v, `${k}: systemd reads ${JSON.stringify(theirs[k])}`);
  for (const k of ['O', 'semi', '1BAD']) assert.equal(k in theirs, false, `${k} is not a variable for systemd either`);
});
