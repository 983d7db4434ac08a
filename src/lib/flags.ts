import { parseArgs } from 'node:util';

/** parseArgs only tokenises: its strict mode stops at the first problem, and a line's mistakes come all at once. */
type FlagSpec = { strings: readonly string[]; booleans: readonly string[]; refuse?: (name: string) => string | null };

export function readFlags(argv: readonly string[], spec: FlagSpec) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const name of spec.strings) options[name] = { type: 'string' };
  for (const name of spec.booleans) options[name] = { type: 'boolean' };
  const values: Record<string, string> = {};
  const on = new Set<string>();
  const problems: string[] = [];
  let start = 0;
  while (start < argv.length) {
    const args = argv.slice(start);
    const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
    let resume = argv.length;
    let swallow = -1;
    let shortAt = -1;
    for (const t of tokens) {
      if (t.kind === 'option-terminator') {
        problems.push('unexpected argument: --');
        continue;
      }
      if (t.kind === 'positional') {
        if (t.index !== swallow) problems.push(`unexpected argument: ${t.value}`);
        continue;
      }
      if (!t.rawName.startsWith('--')) {
        // `-abc` comes back as three tokens with one index: report the word once.
        if (t.index !== shortAt) problems.push(`unexpected argument: ${args[t.index]}`);
        shortAt = t.index;
        continue;
      }
      const type = Object.hasOwn(options, t.name) ? options[t.name]!.type : undefined;
      const refusal = type === undefined ? null : (spec.refuse?.(t.name) ?? null);
      if (type === 'string') {
        const stolen = t.value !== undefined && !t.inlineValue && t.value.startsWith('--');
        if (t.value === undefined || stolen) {
          problems.push(refusal ?? `${t.rawName} needs a value`);
          // parseArgs took the next flag as this one's value: read again from that flag.
          if (stolen) {
            resume = start + t.index + 1;
            break;
          }
          continue;
        }
        if (refusal !== null) problems.push(refusal);
        else values[t.name] = t.value;
      } else if (type === 'boolean') {
        if (refusal !== null) {
          problems.push(refusal);
          continue;
        }
        if (t.value !== undefined) problems.push(`${t.rawName} takes no value`);
        on.add(t.name);
      } else {
        problems.push(`unknown flag: ${t.rawName}`);
        if (t.value === undefined) swallow = t.index + 1;
      }
    }
    start = resume;
  }
  return { values, on, problems };
}

/** Every problem at once; the commands answer it with exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type Flags = { values: Record<string, string>; on: Set<string> };

export function parseFlags(argv: readonly string[], spec: FlagSpec): Flags {
  const { values, on, problems } = readFlags(argv, spec);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return { values, on };
}

export function requireValue(flags: Flags, name: string): string {
  const v = flags.values[name];
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function intFlag(flags: Flags, name: string, { fallback, min = 0 }: { fallback: number; min?: number }): number {
  const raw = flags.values[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}`);
  return Number(raw);
}
