import { readFileSync } from 'node:fs';

/** Secrets come from the environment or `<NAME>_FILE`, never a flag: any local user reads argv with `ps`. */
export const SECRET_NAMES = [
  'SETTLER_PRIVATE_KEY',
  'ADMIN_TOKEN',
  'SERVER_SECRET',
  'FACILITATOR_AUTH',
  'CDP_API_KEY_SECRET',
  'WU_API_KEY',
  'MESSENGER_BOT_TOKEN',
  'REPLICA_ACCESS_KEY_ID',
  'REPLICA_SECRET_ACCESS_KEY',
] as const;

export function isSecretName(name: string): boolean {
  return (SECRET_NAMES as readonly string[]).includes(name);
}

export function flagOf(name: string): string {
  return `--${name.toLowerCase().replace(/_/g, '-')}`;
}

/** The refusal for a secret given as a flag: it names both safe ways. */
export function secretFlagProblem(name: string): string {
  return `${flagOf(name)}: secrets are not accepted as command-line flags (any local user sees them in ps); set ${name} or ${name}_FILE=<path> in the environment`;
}

/** One trailing newline is trimmed; setting both forms is refused rather than silently preferring one. */
export function secretsFromFiles(env: Record<string, string | undefined>) {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  for (const name of SECRET_NAMES) {
    const path = env[`${name}_FILE`];
    if (path === undefined || path === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name}_FILE: set ${name} or ${name}_FILE, not both`);
      continue;
    }
    try {
      const value = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
      if (value === '') problems.push(`${name}_FILE: ${path} is empty`);
      else values[name] = value;
    } catch (err) {
      problems.push(
        `${name}_FILE: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
  }
  return { values, problems };
}

/** The secret-file variables, for the flag parser (a path is not a secret) and `help config`. */
export const SECRET_FILE_NAMES = SECRET_NAMES.map((n) => `${n}_FILE`);

/** For `doctor`: a systemd credential exists only inside the running service, so an unreadable file only gets a note. */
export function withoutUnreadableSecretFiles(
  env: Record<string, string | undefined>,
  canRead: (path: string) => boolean,
): { env: Record<string, string | undefined>; notes: string[] } {
  const out = { ...env };
  const notes: string[] = [];
  for (const name of SECRET_NAMES) {
    const path = env[`${name}_FILE`];
    if (!path || canRead(path)) continue;
    delete out[`${name}_FILE`];
    notes.push(`${name}_FILE: ${path} is not readable here (a service credential?); ${name} not checked`);
  }
  return { env: out, notes };
}
