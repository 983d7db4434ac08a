/**
 * The buyer's command names and help, apart from the commands themselves: main.ts shows the
 * help and dispatches on the names at every start, and evaluates the commands only when one runs
 * (src/cli-commands.ts).
 */
export const CLI_COMMANDS = ['buy', 'read', 'receipt', 'register-chat'] as const;
export type CliCommand = (typeof CLI_COMMANDS)[number];

export const CLI_HELP = `Buyer commands (all take --server <url>, default http://localhost:8402, and --json;
plain http is refused for any host but this machine unless --insecure):
  buy --city <slug> --count <n> [--max-usd N] [--yes]
                                           pay for a bundle of n signals (key: --key-file <file> or ISOCAST_KEY).
                                           Checks the 402 first (exact tier price, USDC on Base, the published
                                           payTo; --max-usd caps it) and asks before paying when run in a terminal
  read --city <slug> [--since N] [--follow] [--interval S]
                                           print entitled signals; --follow keeps polling every S seconds [30]
  receipt                                  recover this wallet's receipt token with a signature (free)
  register-chat --chat <id> [--city <slug>] | --delete
                                           have entitled signals pushed to a chat (wallet-signed, free)
Receipts: --receipts <file> [$XDG_STATE_HOME/isocast/receipts.json, default ~/.local/state/isocast/], mode 0600.
Exit codes: 0 done, 1 failure (also: a challenge refused, nothing signed), 2 usage, 3 payment needed.
`;

export function isCliCommand(name: string): name is CliCommand {
  return (CLI_COMMANDS as readonly string[]).includes(name);
}
