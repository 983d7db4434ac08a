/** The buyer's command names and help, apart from the commands: main.ts loads this at every start. */
export const CLI_COMMANDS = ['buy', 'read', 'receipt', 'register-chat', 'cities', 'keygen'] as const;
export type CliCommand = (typeof CLI_COMMANDS)[number];

const COMMON = '--server <url> [$ISOCAST_SERVER, else http://localhost:8402] --json --timeout <s> [15] --insecure';

/** One command's usage, printed by `isocast <command> --help` and after a usage error. */
export const COMMAND_USAGE: Record<CliCommand, string> = {
  buy: `usage: isocast buy --city <slug> --count <n> [--max-usd N] [--yes] [--key-file <file>] [--receipts <file>]
       ${COMMON}
pay for a bundle of n signals (2..10000; key: --key-file or ISOCAST_KEY). Checks the 402 first (exact
tier price, USDC on Base, the published payTo; --max-usd caps it) and asks before paying in a terminal.
example: isocast buy --city nyc --count 20`,
  read: `usage: isocast read --city <slug> [--since N] [--follow] [--interval S] [--key-file <file>] [--receipts <file>]
       ${COMMON}
print your entitled signals from seq N [0]; --follow keeps polling every S seconds [30].
example: isocast read --city nyc --since 0`,
  receipt: `usage: isocast receipt [--key-file <file>] [--receipts <file>] ${COMMON}
recover this wallet's receipt token with a signature (free) and save it.`,
  'register-chat': `usage: isocast register-chat --chat <id> [--city <slug>] | --delete   [--key-file <file>] ${COMMON}
have entitled signals pushed to a chat, or remove the registration (wallet-signed, free).`,
  cities: `usage: isocast cities [--kind high|low|all] ${COMMON}
list the cities: slug, kind, local time, latest signal seq (a city's free sample is a real signal once it is 2 or more).
--kind: high [default] the daily-high cities, low their daily-low streams (<city>-low), all both.`,
  keygen: `usage: isocast keygen [--out <file>] [--json]
a new throwaway wallet key for trying isocast (mock mode): prints ISOCAST_KEY=0x... and the address, or
writes the key to a new 0600 file with --out. It holds no funds; never use it for real money.`,
};

/** `isocast mcp --help` (the package's src/mcp/server.ts MCP_USAGE says the same for isocast-mcp). */
export const MCP_USAGE = `usage: isocast mcp [--key-file <file>] [--server <url>]
an MCP server on stdin/stdout for an agent's host (Claude Desktop, Cursor, any MCP client): tools
list_cities, get_sample, buy_signals, read_signals. Environment: ISOCAST_SERVER [http://localhost:8402],
ISOCAST_KEY (or --key-file), ISOCAST_MAX_USD_PER_DAY [1] (a daily cap kept in $XDG_STATE_HOME/isocast/).`;

export const CLI_HELP = `Buyer commands (all but keygen take --server <url>, default $ISOCAST_SERVER or http://localhost:8402, and --json;
plain http is refused for any host but this machine unless --insecure; \`isocast <command> --help\` for one):
  buy --city <slug> --count <n> [--max-usd N] [--yes]
                                           pay for a bundle of n signals (key: --key-file <file> or ISOCAST_KEY).
                                           Checks the 402 first (exact tier price, USDC on Base, the published
                                           payTo; --max-usd caps it) and asks before paying when run in a terminal
  read --city <slug> [--since N] [--follow] [--interval S]
                                           print entitled signals; --follow keeps polling every S seconds [30]
  receipt [--revoke]                       recover this wallet's receipt token with a signature (free);
                                           --revoke: one signature revokes every token of the wallet there
  register-chat --chat <id> [--city <slug>] | --delete
                                           have entitled signals pushed to a chat (wallet-signed, free)
  cities [--kind high|low|all]             list slugs, local time and latest signal seq (daily highs; low
                                           streams with --kind low)
  keygen [--out <file>]                    a new throwaway key for testing (prints it and its address)
Receipts: --receipts <file> [$XDG_STATE_HOME/isocast/receipts.json, default ~/.local/state/isocast/], mode 0600.
Exit codes: 0 done, 1 failure (also: a challenge refused, nothing signed), 2 usage, 3 payment needed.
`;

export function isCliCommand(name: string): name is CliCommand {
  return (CLI_COMMANDS as readonly string[]).includes(name);
}
