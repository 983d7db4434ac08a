/** `user:pass@` becomes an Authorization header on the private endpoints only: BASE_URL and TERMS_URL are public. */
const CREDENTIAL_URL_SETTINGS = ['RPC_URL', 'FACILITATOR_URL'] as const;

const URL_SETTINGS = [
  'BASE_URL',
  'TERMS_URL',
  'FACILITATOR_URL',
  'RPC_URL',
  'GAMMA_URL',
  'CLOB_URL',
  'WEATHER_URL',
  'METAR_URL',
  'MESSENGER_API_URL',
] as const;

function hasCredentials(url: string): boolean {
  const u = URL.parse(url);
  return u !== null && (u.username !== '' || u.password !== '');
}

/** The URL without its user:pass, and the Basic Authorization header value they stand for. */
export function splitCredentials(url: string): { url: string; authorization?: string } {
  const u = URL.parse(url);
  if (u === null || (u.username === '' && u.password === '')) return { url };
  const pair = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { url: u.toString(), authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}

/** `a, b,,c` -> [a, b, c] */
export function splitList(raw: string): string[] {
  return splitPlaces(raw).filter((p) => p !== '');
}

/** `a, b,,c` -> [a, b, '', c]: a place with no value stays a place (FACILITATOR_AUTH). */
export function splitPlaces(raw: string): string[] {
  return raw.split(',').map((p) => p.trim());
}

export function urlCredentialProblems(
  c: Partial<Record<(typeof URL_SETTINGS)[number] | 'FACILITATOR_AUTH', string>>,
): string[] {
  const problems: string[] = [];
  for (const name of URL_SETTINGS) {
    const value = c[name];
    // FACILITATOR_URL is a list: any entry with credentials counts.
    if (!value || !(name === 'FACILITATOR_URL' ? splitList(value) : [value]).some(hasCredentials)) continue;
    if (!(CREDENTIAL_URL_SETTINGS as readonly string[]).includes(name)) {
      problems.push(
        `${name}: user:password@ in this URL is not supported (only RPC_URL and FACILITATOR_URL take credentials); remove them`,
      );
    } else if (name === 'FACILITATOR_URL' && c.FACILITATOR_AUTH) {
      // A list pairs each URL with FACILITATOR_AUTH's entry in the same place (settlers/from-config.ts).
      const urls = splitList(value);
      const auths = urls.length === 1 ? [c.FACILITATOR_AUTH] : splitPlaces(c.FACILITATOR_AUTH);
      if (urls.some((u, i) => hasCredentials(u) && auths[i]))
        problems.push('FACILITATOR_URL: has user:password@ and FACILITATOR_AUTH is set too; use one of them');
    }
  }
  return problems;
}

/** Credentials, query values and key-like path segments (Alchemy and Infura put the key there) become `***`. */
export function redactUrl(url: string): string {
  const u = URL.parse(url);
  if (u === null) return '***';
  const creds = u.username !== '' || u.password !== '';
  u.username = '';
  u.password = '';
  for (const k of [...u.searchParams.keys()]) u.searchParams.set(k, '***');
  u.pathname = u.pathname
    .split('/')
    .map((seg) => (looksLikeKey(seg) ? '***' : seg))
    .join('/');
  let text = u.toString().replace(/%2A%2A%2A/g, '***');
  if (u.pathname === '/' && !u.search && !url.endsWith('/')) text = text.slice(0, -1);
  return creds ? text.replace('://', '://***@') : text;
}

function looksLikeKey(segment: string): boolean {
  return (
    segment.length >= 16 && /[0-9]/.test(segment) && /[a-zA-Z]/.test(segment) && /^[A-Za-z0-9_\-.~]+$/.test(segment)
  );
}
