/** Configurations that would lose money or leak if started by accident (config.ts reports them). */
const EXAMPLE_ADMIN_TOKENS = [
  'change-me-to-a-long-random-string', // deploy/env.example before 1.0.1
  'replace-me-with-the-output-of-openssl-rand-hex-32', // deploy/env.example now
];
const MIN_ADMIN_TOKEN_LENGTH = 32;
const GENERATE = 'generate one with `openssl rand -hex 32`';

/** Addresses nobody can spend from (or that are contracts that would keep the USDC): paid to them, money is gone. */
const BURN_ADDRESSES: [address: string, reason: string][] = [
  ['0x0000000000000000000000000000000000000000', 'the zero address (USDC refuses transfers to it)'],
  ['0x000000000000000000000000000000000000dEaD', "the conventional burn address, and isocast's mock-mode PAY_TO"],
  ['0xdEAD000000000000000042069420694206942069', 'a well-known burn address'],
  ['0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', 'the native-ETH placeholder used by DEX aggregators'],
  ['0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF', 'the all-ones address'],
  ...Array.from({ length: 0x11 }, (_, i): [string, string] => [
    `0x${(i + 1).toString(16).padStart(40, '0')}`,
    'a precompiled contract (0x01-0x11): it holds no key',
  ]),
  ['0x0000000000000000000000000000000000000100', 'the P-256 verification precompile: it holds no key'],
];

const BURN = new Map(BURN_ADDRESSES.map(([address, reason]) => [address.toLowerCase(), reason]));
/** Base (OP Stack) system contracts live at 0x4200000000000000000000000000000000000000 + n. */
const PREDEPLOY = /^0x4200000000000000000000000000000000000[0-9a-f]{3}$/;

function burnReason(address: string, usdc: string): string | null {
  const a = address.toLowerCase();
  if (BURN.has(a)) return BURN.get(a)!;
  if (a === usdc.toLowerCase()) return 'the USDC token contract itself';
  if (PREDEPLOY.test(a)) return 'a Base system (predeploy) contract';
  return null;
}

/** OFAC_REQUIRED as given: undefined when not set, so "not required" must be said explicitly. */
export function safetyProblems(c: {
  PAYMENT_MODE: 'mock' | 'live';
  FEED: 'sim' | 'live';
  PAY_TO?: string;
  USDC_ADDRESS: string;
  ADMIN_TOKEN?: string;
  OFAC_LIST_PATH?: string;
  OFAC_REQUIRED?: boolean;
}): string[] {
  const problems: string[] = [];
  if (c.ADMIN_TOKEN !== undefined) {
    if (EXAMPLE_ADMIN_TOKENS.includes(c.ADMIN_TOKEN))
      problems.push(`ADMIN_TOKEN: is the example value from deploy/env.example; ${GENERATE}`);
    else if (c.ADMIN_TOKEN.length < MIN_ADMIN_TOKEN_LENGTH) {
      problems.push(
        `ADMIN_TOKEN: must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (got ${c.ADMIN_TOKEN.length}); ${GENERATE}`,
      );
    }
  }
  if (c.PAYMENT_MODE !== 'live') return problems;
  if (c.FEED === 'sim')
    problems.push(
      'FEED: live payment mode cannot sell the simulated feed; set FEED=live (or PAYMENT_MODE=mock for a demo)',
    );
  if (!c.PAY_TO) problems.push('PAY_TO: live payment mode needs your settlement wallet');
  else {
    const reason = burnReason(c.PAY_TO, c.USDC_ADDRESS);
    if (reason) problems.push(`PAY_TO: ${c.PAY_TO} is ${reason}; payments to it are lost. Set your own wallet`);
  }
  if (c.OFAC_REQUIRED !== false && !c.OFAC_LIST_PATH) {
    problems.push(
      'OFAC_LIST_PATH: live payment mode needs a sanctions list; set OFAC_LIST_PATH=<file> (or OFAC_REQUIRED=false to run without one)',
    );
  }
  return problems;
}

/** After the list is read: live mode that requires screening must not start without it. */
export function sanctionsProblem(
  c: { PAYMENT_MODE: string; OFAC_REQUIRED: boolean },
  loadError: string | null,
): string | null {
  if (c.PAYMENT_MODE !== 'live' || !c.OFAC_REQUIRED || !loadError) return null;
  return `OFAC_LIST_PATH: ${loadError}; fix the file (or set OFAC_REQUIRED=false to run without one)`;
}

/** Mock mode reachable from other machines: a buyer could mistake it for a real seller. */
export function exposureWarning(c: { PAYMENT_MODE: string; HOST: string }): string | null {
  const loopback = c.HOST === 'localhost' || c.HOST === '::1' || c.HOST.startsWith('127.');
  if (c.PAYMENT_MODE !== 'mock' || loopback) return null;
  return (
    `WARNING: mock payment mode is listening on ${c.HOST}, reachable from other machines. Payments are simulated and ` +
    'move no money; signals are not for sale here. Use HOST=127.0.0.1 unless this is a shared demo.'
  );
}

export function startLine(
  c: { PAYMENT_MODE: string; FEED: string; DATA_DIR: string; HOST: string; SIM_SPEED: number },
  port: number,
  s: ReturnType<typeof streamCounts>,
): string {
  const feed = c.FEED === 'sim' ? `sim (simulated weather and markets, ${c.SIM_SPEED}x speed)` : 'live';
  const served = `  ${s.cities} ${s.cities === 1 ? 'city' : 'cities'}, ${s.lowStreams} low ${s.lowStreams === 1 ? 'stream' : 'streams'}`;
  return `isocast listening on http://${hostPort(c.HOST, port)}  payment mode: ${c.PAYMENT_MODE}  feed: ${feed}${served}  data: ${c.DATA_DIR}`;
}

export function streamCounts(active: readonly { kind?: 'high' | 'low' }[]) {
  const lowStreams = active.filter((c) => c.kind === 'low').length;
  return { cities: active.length - lowStreams, lowStreams };
}

export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
