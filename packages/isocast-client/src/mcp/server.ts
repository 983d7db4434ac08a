/// <reference types="node" />
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { privateKeyToAccount } from 'viem/accounts';
import { stripControls } from '../sanitize.ts';
import { createApi, ToolFailure } from './api.ts';
import { loadMcpConfig, type McpConfig, McpConfigError } from './config.ts';
import { spendFile } from './spend.ts';
import { TOOLS, type ToolContext } from './tools.ts';

/**
 * isocast as an MCP server (stdio): an agent's host starts it with a wallet key and a daily cap,
 * and the model gets list_cities, get_sample, buy_signals and read_signals. stdout carries the
 * protocol only; notes go to stderr. The key stays in this process: no tool result, error or
 * log line is built from it.
 */
export const SERVER_NAME = 'isocast';

export type McpServerOptions = McpConfig & { version: string; fetch?: typeof fetch; nowMs?: () => number };

export function createIsocastMcpServer(o: McpServerOptions): Server {
  const account = privateKeyToAccount(o.key);
  let token: string | null = null;
  const ctx: ToolContext = {
    api: createApi(o.server, o.fetch),
    account,
    capMicro: o.capMicro,
    spendFile: spendFile(o.stateHome),
    nowMs: o.nowMs ?? Date.now,
    token: () => token,
    keepToken: (t) => {
      token = t;
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
  const server = new Server({ name: SERVER_NAME, version: o.version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, description, inputSchema, outputSchema }) => ({
      name,
      description,
      inputSchema,
      outputSchema,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === req.params.name);
    if (!tool) return failed(`unknown tool: ${stripControls(req.params.name)}`);
    try {
      const { structured, text } = await tool.run(ctx, req.params.arguments ?? {});
      return { content: [{ type: 'text', text }], structuredContent: structured };
    } catch (err) {
      if (err instanceof ToolFailure) return failed(err.message);
      return failed(`${tool.name} failed: ${stripControls(err instanceof Error ? err.message : String(err))}`);
    }
  });
  return server;
}

function failed(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * `isocast mcp` / `isocast-mcp`: reads the configuration, serves on stdin/stdout until the host
 * closes them. Returns an exit code for a configuration error (printed to stderr), else never
 * resolves before the transport closes.
 */
export async function runIsocastMcp(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  version: string,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${MCP_USAGE}\n`);
    return 0;
  }
  let config: McpConfig;
  try {
    config = loadMcpConfig(env, argv);
  } catch (err) {
    if (err instanceof McpConfigError) {
      process.stderr.write(`isocast mcp: ${err.message}\n${MCP_USAGE}\n`);
      return 2;
    }
    throw err;
  }
  for (const w of config.warnings) process.stderr.write(`isocast mcp: warning: ${w}\n`);
  const server = createIsocastMcpServer({ ...config, version });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  const address = privateKeyToAccount(config.key).address;
  process.stderr.write(
    `isocast mcp: serving ${config.server} for wallet ${address}, daily cap ${config.capMicro / 1e6} USDC\n`,
  );
  await closed;
  return 0;
}

export const MCP_USAGE = `usage: isocast mcp [--key-file <file>] [--server <url>]
an MCP server on stdin/stdout for an agent's host (Claude Desktop, Cursor, any MCP client): tools
list_cities, get_sample, buy_signals, read_signals. Environment: ISOCAST_SERVER [http://localhost:8402],
ISOCAST_KEY (or --key-file), ISOCAST_MAX_USD_PER_DAY [1] (a daily cap kept in $XDG_STATE_HOME/isocast/).`;
