#!/usr/bin/env node
/// <reference types="node" />
import { runIsocastMcp } from './server.ts';

/** `npx isocast-mcp`: the package's MCP server (README.md has the host configuration). */
const VERSION = '2.1.0';

runIsocastMcp(process.argv.slice(2), process.env, VERSION).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`isocast-mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
