import { CLI_COMMANDS } from './buyer/cli/help.ts';
import { nearest } from './lib/nearest.ts';
import { RESTORE_USAGE } from './replication/restore.ts';

/** The operator commands' own usage (the buyer's: buyer/cli/help.ts; replay's: replay/help.ts). */
const FLAGS_NOTE = `Every configuration variable is also a flag (PAY_TO=0x.. or --pay-to 0x..), except secrets;
\`isocast help config\` lists them. --env-file <path> reads variables from a file (systemd's rules).`;

export const SERVER_USAGE = {
  serve: `usage: isocast serve [flags]
run the API, the poller and the delivery worker (the default command). Stops gracefully on
SIGTERM/SIGINT; SIGHUP reloads the sanctions list. Exit 2 on bad configuration.
${FLAGS_NOTE}
example: PORT=8402 isocast serve`,
  migrate: `usage: isocast migrate [--data-dir <dir>]
bring DATA_DIR/isocast.db to the current schema and exit (serve does this at start too).`,
  backup: `usage: isocast backup <file> [--data-dir <dir>]
write a consistent copy of the live database to <file>; safe while serving. Exit 1 when there is no
database.
example: isocast backup /var/backups/isocast-$(date +%F).db`,
  restore: `${RESTORE_USAGE}
restore the database from REPLICA_URL (Litestream) into an empty DATA_DIR; needs the server secret
(SERVER_SECRET, SERVER_SECRET_FILE or DATA_DIR/server-secret). --timestamp: the state at that instant.
${FLAGS_NOTE}`,
  doctor: `usage: isocast doctor [flags]
check the configuration, the database (read-only), the sanctions list, the replica and the
upstreams as serve would use them; exit 1 when a check fails.
${FLAGS_NOTE}`,
};

export const isServerCommand = (name: string): name is keyof typeof SERVER_USAGE => Object.hasOwn(SERVER_USAGE, name);

const COMMAND_NAMES: readonly string[] = [
  ...Object.keys(SERVER_USAGE),
  'explain',
  'replay',
  'mcp',
  'help',
  'version',
  ...CLI_COMMANDS,
];

/** `unknown command: bye; did you mean buy?`, then the names (the whole help is one `--help` away). */
export function unknownCommand(name: string): string {
  const near = nearest(name, COMMAND_NAMES);
  const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}...` : name);
  return `isocast: unknown command ${shown}${near ? `; did you mean ${near}?` : ''}
commands: ${COMMAND_NAMES.join(', ')}
\`isocast --help\` shows them all; \`isocast <command> --help\` one.`;
}
