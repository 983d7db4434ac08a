/// <reference types="node" />
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Hex } from 'viem';
import { usdToMicro } from './spend.ts';

/**
 * The MCP server's settings, from the environment the host gives it and its arguments:
 * ISOCAST_SERVER (default http://localhost:8402), ISOCAST_KEY or `--key-file <file>`,
 * ISOCAST_MAX_USD_PER_DAY (default 1) and the state directory ($XDG_STATE_HOME, else
 * ~/.local/state, as the isocast CLI uses). The key is read here and held only in memory; no
 * message built here ever quotes it.
 */
export const DEFAULT_SERVER = 'http://localhost:8402';
export const DEFAULT_MAX_USD_PER_DAY = '1';

export type McpConfig = {
  server: string;
  key: Hex;
  capMicro: number;
  stateHome: string;
  /** Things the person who set it up should know (a key file others can read); go to stderr. */
  warnings: string[];
};

export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigError';
  }
}

const KEY = /^(0x)?([0-9a-fA-F]{64})$/;

function parseKey(text: string, where: string): Hex {
  const m = KEY.exec(text.trim());
  if (!m) throw new McpConfigError(`${where} does not hold a private key (expected 64 hex characters)`);
  return `0x${m[2]!.toLowerCase()}`;
}

export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** https, or plain http to this machine only: payment headers and receipt tokens must not cross a network in clear. */
function serverOf(raw: string): string {
  let u: URL | null = null;
  try {
    u = new URL(raw);
  } catch {}
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname)
    throw new McpConfigError(`ISOCAST_SERVER must be an absolute http(s) URL, got ${raw}`);
  if (u.protocol === 'http:' && !isLoopback(u.hostname))
    throw new McpConfigError(`ISOCAST_SERVER ${u.host}: plain http is allowed only to this machine; use https`);
  return raw.replace(/\/+$/, '');
}

function flag(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(`--${name}`);
  const inline = argv.find((a) => a.startsWith(`--${name}=`));
  return inline ? inline.slice(name.length + 3) : at >= 0 ? argv[at + 1] : undefined;
}

export function stateHomeOf(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return xdg;
  return join(env.HOME || homedir(), '.local', 'state');
}

export function loadMcpConfig(env: Record<string, string | undefined>, argv: readonly string[]): McpConfig {
  const warnings: string[] = [];
  const keyFile = flag(argv, 'key-file');
  let key: Hex;
  if (keyFile) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (err) {
      throw new McpConfigError(`cannot read --key-file ${keyFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    key = parseKey(text, `--key-file ${keyFile}`);
    if (process.platform !== 'win32' && (statSync(keyFile).mode & 0o077) !== 0)
      warnings.push(`${keyFile} is readable by other users; chmod 600 it`);
  } else if (env.ISOCAST_KEY) {
    key = parseKey(env.ISOCAST_KEY, 'ISOCAST_KEY');
  } else {
    throw new McpConfigError('a wallet key is needed: ISOCAST_KEY in the environment or --key-file <file>');
  }
  const rawCap = env.ISOCAST_MAX_USD_PER_DAY || DEFAULT_MAX_USD_PER_DAY;
  const capMicro = usdToMicro(rawCap);
  if (capMicro === null)
    throw new McpConfigError(`ISOCAST_MAX_USD_PER_DAY must be a USD amount such as 1 or 0.50, got ${rawCap}`);
  const server = serverOf(flag(argv, 'server') ?? (env.ISOCAST_SERVER || DEFAULT_SERVER));
  return { server, key, capMicro, stateHome: stateHomeOf(env), warnings };
}
