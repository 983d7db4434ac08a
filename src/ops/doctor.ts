import { redactUrl } from '../lib/url-credentials.ts';
import { SECRET_NAMES } from '../lib/secrets.ts';
import { type Check, type DoctorDeps, DOCTOR_CHECKS } from './doctor-checks.ts';

/**
 * `isocast doctor`. Upstream checks only ask whether the host answers HTTP: they must not spend an
 * API key's quota or move money. Everything printed is redacted.
 */

export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  const checks: Check[] = [];
  for (const check of DOCTOR_CHECKS) checks.push(...(await check(deps)));
  return checks.map((c) => ({ ...c, detail: redact(c.detail, deps.config) }));
}

/** URLs lose credentials and key-like parts; any configured secret value that still appears becomes ***. */
export function redact(text: string, config: Partial<Record<string, unknown>>): string {
  let out = text.replace(/https?:\/\/[^\s,;)]+/g, (u) => redactUrl(u));
  for (const name of SECRET_NAMES) {
    const v = config[name];
    if (typeof v === 'string' && v.length >= 4) out = out.split(v).join('***');
  }
  return out;
}

/** One line per check; a check's detail may hold several lines (grouped reasons), indented under it. */
export function formatReport(checks: Check[]): string {
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  const width = Math.max(...checks.map((c) => c.name.length));
  const indent = ' '.repeat(width + 9);
  const lines = checks.map(
    (c) => `[${mark[c.status]}] ${c.name.padEnd(width)}  ${c.detail.split('\n').join(`\n${indent}`)}`,
  );
  const failed = checks.filter((c) => c.status === 'fail').length;
  lines.push('', failed ? `${failed} check(s) failed` : 'all required checks passed');
  return lines.join('\n') + '\n';
}
