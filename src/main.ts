#!/usr/bin/env node
import { ConfigError, loadConfig, loadDataDir } from './config.ts';
import { withoutUnreadableSecretFiles } from './lib/secrets.ts';
import { openDb, openReadOnly } from './db/open.ts';
import { secureDataDir } from './db/files.ts';
import { VERSION } from './version.ts';
import { CLI_COMMANDS, CLI_HELP, COMMAND_USAGE, isCliCommand, MCP_USAGE } from './buyer/cli/help.ts';
import { nativeSqliteBinding } from './db/native-binding.ts';
import { formatReport, runDoctor } from './ops/doctor.ts';
import { EXPLAIN_USAGE, explainArgs, formatExplain, readDay } from './ops/explain.ts';
import { REPLAY_HELP } from './replay/help.ts';
import { accessSync, constants as fsConstants, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { parseEnvFile } from './lib/env-file.ts';
import { configHelp } from './config-help.ts';
import { RESTORE_USAGE, restoreArgs, restoreDatabase } from './replication/restore.ts';
import { dbPath, open, refuse } from './preflight.ts';
import { serve } from './serve.ts';
import { nearest } from './lib/nearest.ts';

/** The commands. Exit codes: 0 done, 1 runtime failure, 2 bad configuration or usage. */
const HELP = `isocast ${VERSION}: daily-high temperature market signals, sold over x402

Usage: isocast <command> [flags]

Commands:
  serve       run the API, the poller and the delivery worker (default)
  migrate     bring the database in DATA_DIR to the current schema and exit
  backup <file>  write a consistent copy of the live database to <file> (safe while serving)
  restore [--timestamp T]  restore the database from REPLICA_URL into an empty DATA_DIR
  doctor      check configuration, database, sanctions list and upstreams; exit 1 on failure
  explain <city> <date> [--json]  a city-day's stored signals: raw report, reading, bucket, odds, timestamps
  replay      replay a past city-day: the signals that would have fired and the final bucket (below)
  buy, read, receipt, register-chat, cities, keygen   the buyer's client (below)
  mcp         an MCP server on stdio for an agent's host: buy and read signals as tools (mcp --help)
  help [config]  show this help, or every configuration variable with its default
  version     print the version (also -v, --version; -h, --help)

\`isocast <command> --help\` shows one command's usage.
--env-file <path> (any command) reads variables from a file with systemd's EnvironmentFile rules.
Every configuration variable is also a serve flag: PAY_TO=0x.. or --pay-to 0x.., except secrets
(environment or <NAME>_FILE only). \`isocast help config\` lists them all.
Signals: SIGTERM/SIGINT stop gracefully; SIGHUP reloads the sanctions list (OFAC_LIST_PATH).

${REPLAY_HELP}
${CLI_HELP}`;

/** The operator commands' own usage (the buyer's: buyer/cli/help.ts; replay's: replay/help.ts). */
const FLAGS_NOTE = `Every configuration variable is also a flag (PAY_TO=0x.. or --pay-to 0x..), except secrets;
\`isocast help config\` lists them. --env-file <path> reads variables from a file (systemd's rules).`;

const SERVER_USAGE = {
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

const isServerCommand = (name: string): name is keyof typeof SERVER_USAGE => Object.hasOwn(SERVER_USAGE, name);

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
function unknownCommand(name: string): string {
  const near = nearest(name, COMMAND_NAMES);
  const shown = JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}...` : name);
  return `isocast: unknown command ${shown}${near ? `; did you mean ${near}?` : ''}
commands: ${COMMAND_NAMES.join(', ')}
\`isocast --help\` shows them all; \`isocast <command> --help\` one.`;
}

function usage(text: string): never {
  process.stderr.write(`${text}\n`);
  process.exit(2);
}

function migrate(args: string[]): void {
  const config = loadDataDir(process.env, args);
  const db = open(config);
  process.stdout.write(`schema at version ${db.pragma('user_version', { simple: true })} in ${dbPath(config)}\n`);
  db.close();
}

async function backup(args: string[]): Promise<void> {
  const [dest, ...flags] = args;
  if (!dest || dest.startsWith('--')) usage(`isocast backup: needs the file to write\n${SERVER_USAGE.backup}`);
  const config = loadDataDir(process.env, flags);
  // No migration here: the upgrade path backs up with the new binary before it first starts, and
  // the copy must hold the old schema so the old binary can be restored with it.
  if (!existsSync(dbPath(config))) {
    process.stderr.write(`isocast backup: no database at ${dbPath(config)}\n`);
    process.exit(1);
  }
  secureDataDir(config.DATA_DIR);
  const nativeBinding = nativeSqliteBinding();
  const db = openDb(dbPath(config), { nativeBinding, migrate: false });
  try {
    if (existsSync(dest)) throw new Error(`${dest} already exists; choose a new file name`);
    // SQLite's online backup to `dest.partial`, renamed once integrity_check passes: no half-written file has the name.
    const partial = `${dest}.partial`;
    rmSync(partial, { force: true });
    try {
      const { totalPages } = await db.backup(partial, { progress: () => 256 });
      const copy = new Database(partial, nativeBinding ? { nativeBinding: nativeBinding as unknown as string } : {});
      try {
        const check = copy.pragma('integrity_check', { simple: true });
        if (check !== 'ok') throw new Error(`backup failed integrity check: ${String(check)}`);
        // A single-file copy is easier to move around than a WAL pair.
        copy.pragma('journal_mode = DELETE');
      } finally {
        copy.close();
      }
      renameSync(partial, dest);
      process.stdout.write(`backup written to ${dest}: ${totalPages} pages, integrity ok\n`);
    } catch (err) {
      rmSync(partial, { force: true });
      throw err;
    }
  } finally {
    db.close();
  }
}

async function restore(args: string[]): Promise<void> {
  const parsed = restoreArgs(args);
  if (parsed.problem) usage(`${parsed.problem}\n${RESTORE_USAGE}`);
  const config = loadConfig(process.env, parsed.rest);
  process.exitCode = await restoreDatabase(config, { dbPath: dbPath(config), timestamp: parsed.timestamp });
}

async function doctor(args: string[]): Promise<void> {
  const readable = withoutUnreadableSecretFiles(process.env, (path) => {
    try {
      accessSync(path, fsConstants.R_OK);
      return true;
    } catch {
      return false;
    }
  });
  for (const note of readable.notes) process.stdout.write(`note: ${note}\n`);
  const config = loadConfig(readable.env, args);
  // Read-only: doctor must never migrate (the upgrade path backs up the old schema first).
  const readOnly = () => openReadOnly(dbPath(config), { nativeBinding: nativeSqliteBinding() });
  const checks = await runDoctor({ config, openDb: readOnly, dbPath: dbPath(config) });
  process.stdout.write(formatReport(checks));
  if (checks.some((c) => c.status === 'fail')) process.exit(1);
}

/** `isocast explain`: read-only, never migrates; exit 2 for usage, 1 without a database. */
function explain(args: string[]): void {
  const parsed = explainArgs(args);
  if ('problem' in parsed)
    usage(parsed.problem === EXPLAIN_USAGE ? parsed.problem : `${parsed.problem}\n${EXPLAIN_USAGE}`);
  const config = loadDataDir(process.env, parsed.rest);
  if (!existsSync(dbPath(config))) {
    process.stderr.write(`isocast explain: no database at ${dbPath(config)}\n`);
    process.exit(1);
  }
  const db = openReadOnly(dbPath(config), { nativeBinding: nativeSqliteBinding() });
  try {
    const rows = readDay(db, parsed);
    if (parsed.json) process.stdout.write(`${JSON.stringify(rows.map((r) => r.signal))}\n`);
    else process.stdout.write(formatExplain(rows, parsed));
  } finally {
    db.close();
  }
}

function answeredHelp(command: string, args: string[]): boolean {
  const asksHelp = args.includes('--help') || args.includes('-h');
  if (command === 'help' && args[0] === 'config') process.stdout.write(configHelp());
  // `isocast buy --help`, `serve --help`: that command's own usage; `isocast help`: all of it.
  else if (asksHelp && isCliCommand(command)) process.stdout.write(`${COMMAND_USAGE[command]}\n`);
  else if (asksHelp && isServerCommand(command)) process.stdout.write(`${SERVER_USAGE[command]}\n`);
  else if (asksHelp && command === 'replay') process.stdout.write(REPLAY_HELP);
  else if (asksHelp && command === 'mcp') process.stdout.write(`${MCP_USAGE}\n`);
  else if (asksHelp || command === 'help') process.stdout.write(HELP);
  else if (args.includes('--version') || args.includes('-v') || command === 'version')
    process.stdout.write(`isocast ${VERSION}\n`);
  else return false;
  return true;
}

/** `--env-file <path>` anywhere: its variables (systemd's rules) override the environment, no shell `source`. */
function applyEnvFile(argv: string[]): string[] {
  const at = argv.findIndex((a) => a === '--env-file' || a.startsWith('--env-file='));
  if (at < 0) return argv;
  const inline = argv[at]!.startsWith('--env-file=');
  const path = inline ? argv[at]!.slice('--env-file='.length) : argv[at + 1];
  if (!path || path.startsWith('--')) usage('isocast: --env-file needs a path');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    usage(`isocast: --env-file: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  Object.assign(process.env, parseEnvFile(text));
  return [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))];
}

async function main(rawArgv: string[]): Promise<void> {
  const argv = applyEnvFile(rawArgv);
  const [first, ...rest] = argv;
  const command = !first || first.startsWith('-') ? 'serve' : first;
  const args = command === first ? rest : argv;
  // `isocast --help` is the whole help even though the command it implies is serve.
  if (answeredHelp(command === first ? command : '', args)) return;
  // Every file the process creates (database, WAL, secret, backups) is private to its user, systemd's UMask=0077 or not.
  if (isServerCommand(command)) process.umask(0o077);
  const local = new Map(Object.entries({ serve, migrate, backup, restore, explain, doctor })).get(command);
  if (local) return local(args);
  // Loaded only when asked for: serve's start-up never loads src/cli-commands.ts.
  if (command === 'replay' || command === 'mcp' || isCliCommand(command)) {
    const cli = await import('./cli-commands.ts');
    if (command === 'replay') process.exitCode = await cli.replay(args, process.env);
    else if (command === 'mcp') process.exitCode = await cli.mcp(args, process.env);
    else process.exitCode = await cli.buyerCommand(command, args, process.env);
    return;
  }
  usage(unknownCommand(command));
}

// A bad setting or flag (ConfigError) in any command: its problems, exit 2.
main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) refuse(err.problems);
  process.stderr.write(`isocast: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
