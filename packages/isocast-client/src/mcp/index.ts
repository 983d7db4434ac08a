/**
 * `@isocast/client/mcp`: isocast's MCP server (needs the peer `@modelcontextprotocol/sdk`; the
 * main entry does not). `isocast-mcp` (bin.ts) and the isocast CLI's `isocast mcp` run it.
 */
export { loadMcpConfig, type McpConfig, McpConfigError } from './config.ts';
export { createIsocastMcpServer, MCP_USAGE, type McpServerOptions, runIsocastMcp } from './server.ts';
export { capProblem, type SpendState, utcDay } from './spend.ts';
export { TOOLS } from './tools.ts';
