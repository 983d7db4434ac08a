/**
 * Server-provided text is printed only after this: a hostile server must not be able to move the
 * cursor, retitle the terminal, hide text, forge extra output lines or reorder it with bidi
 * controls. C0 (including newlines and tabs), DEL, C1 and the Unicode bidi/format controls go.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

export function stripControls(s: string): string {
  return s.replace(CONTROL, '');
}

const ANY_CONTROL = new RegExp(CONTROL.source);

export function hasControls(s: string): boolean {
  return ANY_CONTROL.test(s);
}

/** A deep copy of a JSON value with every string (keys too) stripped of control characters. */
export function stripControlsDeep<T>(value: T): T {
  if (typeof value === 'string') return stripControls(value) as T;
  if (Array.isArray(value)) return value.map((v) => stripControlsDeep(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[stripControls(k)] = stripControlsDeep(v);
    return out as T;
  }
  return value;
}

/** The JSON path of the first string (or key) holding a control character, or null. */
export function findControls(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return hasControls(value) ? path || 'body' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findControls(value[i], `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = path ? `${path}.${stripControls(k)}` : stripControls(k);
      if (hasControls(k)) return here;
      const p = findControls(v, here);
      if (p) return p;
    }
  }
  return null;
}
