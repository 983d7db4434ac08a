/** systemd.exec(5)'s EnvironmentFile= rules: `--env-file` sees what the unit sees, which a shell `.` does not. */
const WHITESPACE = ' \t\r\n';
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (WHITESPACE.includes(c)) i++;
    else if (c === '#' || c === ';') {
      // To the end of the line; a backslash carries a comment onto the next.
      while (i < text.length && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    } else {
      const eq = text.indexOf('=', i + 1);
      const nl = text.indexOf('\n', i);
      // A line without `=` is skipped.
      if (eq < 0 || (nl >= 0 && nl < eq)) i = nl < 0 ? text.length : nl + 1;
      else i = assign(out, text.slice(i, eq).trimEnd(), { text, from: eq + 1 });
    }
  }
  return out;
}

/** Returns where the next line starts. */
function assign(out: Record<string, string>, key: string, { text, from }: { text: string; from: number }): number {
  let value = '';
  // Unquoted text has begun (quotes are then literal); from `trailingFrom` it is whitespace, dropped at the end.
  let bare = false;
  let trailingFrom = -1;
  let j = from;
  for (; j < text.length && text[j] !== '\n'; j++) {
    const c = text[j]!;
    if (c === '\\') {
      // The next character as it is; a newline continues the value on the next line.
      if (++j < text.length && text[j] !== '\n') value += text[j];
      bare = true;
      trailingFrom = -1;
    } else if (!bare && c === "'") {
      const close = text.indexOf("'", j + 1);
      const end = close < 0 ? text.length : close;
      value += text.slice(j + 1, end);
      j = end;
    } else if (!bare && c === '"') {
      for (j++; j < text.length && text[j] !== '"'; j++) {
        if (text[j] !== '\\') value += text[j];
        else if (++j < text.length && text[j] !== '\n') value += '"\\`$'.includes(text[j]!) ? text[j] : `\\${text[j]}`;
      }
    } else if (!WHITESPACE.includes(c)) {
      bare = true;
      trailingFrom = -1;
      value += c;
    } else if (bare) {
      if (trailingFrom < 0) trailingFrom = value.length;
      value += c;
    }
  }
  if (NAME.test(key)) out[key] = trailingFrom >= 0 ? value.slice(0, trailingFrom) : value;
  return j + 1;
}
