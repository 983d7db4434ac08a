/** Redaction is by key name at any depth, so a payment header or bot token passed by mistake is masked. */
export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Logger = Record<Level, (msg: string, fields?: Record<string, unknown>) => void> & {
  child(fields: Record<string, unknown>): Logger;
};

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const REDACT_KEY =
  /^(x-payment|authorization|cookie|signature|receipt.?token|token|bot.?token|messenger.?bot.?token|secret|server.?secret|private.?key|settler.?private.?key|facilitator.?auth|api.?key|wu.?api.?key|key|password|secret.?access.?key|replica.?secret.?access.?key)$/i;

/** Token-shaped substrings that must not appear in free text either (bot tokens, bearer values). */
const REDACT_TEXT = [/\bbot\d+:[A-Za-z0-9_-]{20,}/g, /\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, /\bisr_[A-Za-z0-9_-]{16,}/g];

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[deep]';
  if (typeof value === 'string') return redactText(value);
  if (value instanceof Error) {
    // Stack and cause make a failure traceable; both pass the same redaction as the message.
    const out: Record<string, unknown> = { name: value.name, message: redactText(value.message) };
    if (value.stack) out.stack = redactText(value.stack);
    if (value.cause !== undefined) out.cause = redact(value.cause, depth + 1);
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = REDACT_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
    return out;
  }
  return value;
}

/** Every REDACT_TEXT match contains one of these: most values (addresses, hashes, slugs) skip the three replaces. */
const REDACT_HINT = /bot\d|bearer|isr_/i;

function redactText(s: string): string {
  if (!REDACT_HINT.test(s)) return s;
  let out = s;
  for (const re of REDACT_TEXT) out = out.replace(re, '[redacted]');
  return out;
}

/** `pretty` (a terminal's default) is built from the same redacted record as `json`, so secrets are masked in both. */
type LogFormat = 'json' | 'pretty';

export function defaultLogFormat(isTty: boolean): LogFormat {
  return isTty ? 'pretty' : 'json';
}

const LEVEL_LABEL: Record<Level, string> = { debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR' };

const prettyValue = (v: unknown) => (typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v));

function formatPretty(rec: Record<string, unknown>): string {
  const { ts, level, msg, service: _service, ...fields } = rec;
  const time = typeof ts === 'string' ? ts.slice(11, 19) : '';
  const rest = Object.entries(fields)
    .map(([k, v]) => `${k}=${prettyValue(v)}`)
    .join(' ');
  return `${time} ${LEVEL_LABEL[level as Level] ?? String(level)} ${String(msg)}${rest ? `  ${rest}` : ''}`;
}

/**
 * Stdout lines written together FLUSH_MS after the first: a write(2) per line cost 6.6 % of a paid request's CPU.
 * Warnings flush at once and `exit` writes the rest; only a SIGKILL loses the last FLUSH_MS of info lines.
 */
const FLUSH_MS = 25;
const FLUSH_LINES = 128;
let pending: string[] = [];
let scheduled = false;
function flushStdout(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = `${pending.join('\n')}\n`;
  pending = [];
  process.stdout.write(text);
}
let exitHooked = false;
function stdoutLine(line: string, now: boolean): void {
  if (pending.push(line) >= FLUSH_LINES || now) {
    flushStdout();
    return;
  }
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushStdout);
  }
  if (!scheduled) {
    scheduled = true;
    // Unref'd: pending lines never keep a process alive; `exit` writes them.
    setTimeout(flushStdout, FLUSH_MS).unref();
  }
}

export function createLogger(
  opts: { level?: Level; write?: (line: string) => void; base?: Record<string, unknown>; format?: LogFormat } = {},
): Logger {
  const min = ORDER[opts.level ?? 'info'];
  const custom = opts.write;
  const write = (line: string, level: Level) => (custom ? custom(line) : stdoutLine(line, ORDER[level] >= ORDER.warn));
  const base = opts.base ?? {};
  const format = opts.format ?? 'json';
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const rec = redact({ ts: new Date().toISOString(), level, msg, ...base, ...fields }) as Record<string, unknown>;
    write(format === 'pretty' ? formatPretty(rec) : JSON.stringify(rec), level);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger({ level: opts.level, write: custom, base: { ...base, ...fields }, format }),
  };
}
