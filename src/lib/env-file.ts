/**
 * An environment file read with systemd's EnvironmentFile= rules (systemd.exec(5)), so that a
 * hand-run `isocast --env-file /etc/isocast/env doctor` or a cron line sees exactly what the unit
 * sees. A shell `. /etc/isocast/env` does not: `FACILITATOR_AUTH=Bearer abc` runs `abc` as a
 * command in sh, while systemd assigns "Bearer abc". The rules, as systemd's parser applies them:
 * - blank lines, lines starting with `#` or `;` (after leading whitespace) and lines without `=`
 *   are ignored; a comment line ending in a backslash swallows the next line too;
 * - whitespace around the key and before the value is dropped; keys that are not environment
 *   names are ignored;
 * - unquoted: interior whitespace kept, trailing whitespace dropped, a backslash keeps the next
 *   character literally and a backslash-newline continues the line; quotes inside are literal;
 * - '...': everything verbatim (newlines too) up to the next single quote, no escapes;
 * - "...": may span lines; backslash before one of " \ ` $ keeps that character, before a newline
 *   continues the line, before anything else is kept with the character;
 * - after a closing quote, whitespace is skipped and further text (quoted or not) is appended.
 * No `$VAR` expansion happens (systemd expands only in Exec lines). test/lib/env-file.test.ts
 * compares this with systemd's own parser (its environment.d generator) where that is installed.
 */
const WHITESPACE = ' \t\r\n';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type State =
  | 'preKey'
  | 'key'
  | 'preValue'
  | 'value'
  | 'valueEscape'
  | 'single'
  | 'double'
  | 'doubleEscape'
  | 'comment'
  | 'commentEscape';

export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let state: State = 'preKey';
  let key = '';
  let value = '';
  // Index in `value` from which the unquoted tail is whitespace (dropped at the end of the line).
  let trailingFrom = -1;
  const finish = () => {
    const k = key.trimEnd();
    const v = trailingFrom >= 0 ? value.slice(0, trailingFrom) : value;
    if (NAME.test(k)) out[k] = v;
    key = '';
    value = '';
    trailingFrom = -1;
  };
  for (const c of text) {
    switch (state) {
      case 'preKey':
        if (c === '#' || c === ';') state = 'comment';
        else if (!WHITESPACE.includes(c)) {
          state = 'key';
          key = c;
        }
        break;
      case 'key':
        if (c === '\n') {
          state = 'preKey';
          key = '';
        } else if (c === '=') state = 'preValue';
        else key += c;
        break;
      case 'preValue':
        if (c === '\n') {
          finish();
          state = 'preKey';
        } else if (c === "'") state = 'single';
        else if (c === '"') state = 'double';
        else if (c === '\\') state = 'valueEscape';
        else if (!WHITESPACE.includes(c)) {
          state = 'value';
          value += c;
        }
        break;
      case 'value':
        if (c === '\n') {
          finish();
          state = 'preKey';
        } else if (c === '\\') {
          state = 'valueEscape';
          trailingFrom = -1;
        } else {
          if (WHITESPACE.includes(c)) {
            if (trailingFrom < 0) trailingFrom = value.length;
          } else trailingFrom = -1;
          value += c;
        }
        break;
      case 'valueEscape':
        state = 'value';
        if (c !== '\n') value += c;
        break;
      case 'single':
        if (c === "'") state = 'preValue';
        else value += c;
        break;
      case 'double':
        if (c === '"') state = 'preValue';
        else if (c === '\\') state = 'doubleEscape';
        else value += c;
        break;
      case 'doubleEscape':
        state = 'double';
        if (c === '\n') break;
        if ('"\\`$'.includes(c)) value += c;
        else value += `\\${c}`;
        break;
      case 'comment':
        if (c === '\\') state = 'commentEscape';
        else if (c === '\n') state = 'preKey';
        break;
      case 'commentEscape':
        state = 'comment';
        break;
    }
  }
  if (state !== 'preKey' && state !== 'comment' && state !== 'commentEscape' && state !== 'key') finish();
  return out;
}
