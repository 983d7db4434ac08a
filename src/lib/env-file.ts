/** systemd.exec(5)'s EnvironmentFile= rules: `--env-file` sees what the unit sees, which a shell `.` does not. */
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
