import { readFileSync } from 'node:fs';
import { runCli } from './buyer/cli/index.ts';
import type { CliCommand } from './buyer/cli/help.ts';
import { terminalConfirm } from './buyer/cli/output.ts';
import { stateHomeOf } from '../packages/isocast-client/src/mcp/config.ts';
import { CITY_ROWS, createCatalog } from './cities/catalog.ts';
import { ConfigError, loadConfig } from './config.ts';
import { systemClock } from './lib/clock.ts';
import { replayCommand } from './replay/command.ts';
import { ReplayInputError } from './replay/errors.ts';
import { VERSION } from './version.ts';

/** Loaded only for these commands (their code was about 5 ms of every start); each returns the exit code. */
/** Buyer commands: the environment they see (ISOCAST_KEY, the XDG state dir) comes from `env`. */
export async function buyerCommand(command: CliCommand, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // `isocast cities | head`: a closed pipe ends the output quietly, not with Node's EPIPE trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await runCli(command, argv, {
      stdout: (line) => process.stdout.write(`${line}\n`),
      stderr: (line) => process.stderr.write(`${line}\n`),
      envKey: env.ISOCAST_KEY || undefined,
      envServer: env.ISOCAST_SERVER || undefined,
      signal: stop.signal,
      stateHome: stateHomeOf(env),
      confirm: terminalConfirm(),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** `replay`: the upstreams' configuration is read from `env` only when something is fetched. */
export async function replay(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return replayCommand(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readFile: (path) => readFileSync(path, 'utf8'),
    clock: systemClock,
    // Every stream replays, whatever MARKET_KINDS the server runs with (`nyc-low` as `nyc`).
    catalog: createCatalog(CITY_ROWS, { mode: 'spec' }, 'high,low'),
    upstreams: () => {
      try {
        const c = loadConfig(env);
        return {
          weatherSource: c.WEATHER_SOURCE,
          weatherUrl: c.WEATHER_URL,
          wuApiKey: c.WU_API_KEY,
          metarUrl: c.METAR_URL,
          hkoUrl: c.HKO_URL,
          gammaUrl: c.GAMMA_URL,
        };
      } catch (err) {
        if (err instanceof ConfigError) throw new ReplayInputError(`configuration: ${err.problems.join('; ')}`);
        throw err;
      }
    },
  });
}

/** `mcp`: the buyer package's MCP server on stdio; it and the MCP SDK load only when asked for. */
export async function mcp(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { runIsocastMcp } = await import('../packages/isocast-client/src/mcp/server.ts');
  return runIsocastMcp(argv, env, VERSION);
}
