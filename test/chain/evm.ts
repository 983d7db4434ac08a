import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, http, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { EIP3009_ABI } from '../../src/payments/settlers/chain.ts';
import { chainFor } from '../../src/payments/settlers/chain-proof.ts';

/**
 * A local in-process EVM for the chain-settlement test: hardhat 2's EDR provider with chain id
 * 8453, served over JSON-RPC on 127.0.0.1 so the code under test talks to RPC_URL exactly as in
 * production, and an EIP-3009 token compiled here with solc-js from @openzeppelin/contracts.
 */
const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

/** Hardhat's well-known dev accounts (public test keys, funded with test ether only). */
export const DEPLOYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
export const SETTLER_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

type Provider = { request(args: { method: string; params?: unknown[] }): Promise<unknown> };

export type LocalChain = {
  rpcUrl: string;
  /** Direct provider access (evm_mine, evm_increaseTime, evm_setAutomine) that skips the hook. */
  request(method: string, params?: unknown[]): Promise<unknown>;
  close(): Promise<void>;
};

/** `beforeRequest` runs before each JSON-RPC call reaches the EVM (tests inject a competitor there). */
export async function startLocalChain(
  opts: { beforeRequest?: (method: string, params: unknown[]) => Promise<void> } = {},
): Promise<LocalChain> {
  const { resolveConfig } = require('hardhat/internal/core/config/config-resolution');
  const { createProvider } = require('hardhat/internal/core/providers/construction');
  // resolveConfig only needs an existing path to anchor project paths; no config file is read.
  const config = resolveConfig(fileURLToPath(import.meta.url), {
    networks: { hardhat: { chainId: 8453, hardfork: 'cancun' } },
  });
  const provider: Provider = await createProvider(config, 'hardhat');
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const one = async (m: { id: unknown; method: string; params?: unknown[] }) => {
      try {
        await opts.beforeRequest?.(m.method, m.params ?? []);
        return {
          jsonrpc: '2.0',
          id: m.id,
          result: await provider.request({ method: m.method, params: m.params ?? [] }),
        };
      } catch (err) {
        const e = err as { code?: number; message: string; data?: unknown };
        return { jsonrpc: '2.0', id: m.id, error: { code: e.code ?? -32603, message: e.message, data: e.data } };
      }
    };
    const out = Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    rpcUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    request: (method, params = []) => provider.request({ method, params }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function compileTestUsdc(): { abi: Abi; bytecode: Hex } {
  return compileContract('TestUSDC');
}

/** `name`.sol from this folder (contract `name`), compiled with solc-js against @openzeppelin/contracts. */
export function compileContract(name: string): { abi: Abi; bytecode: Hex } {
  const solc = require('solc');
  const ozRoot = dirname(require.resolve('@openzeppelin/contracts/package.json'));
  const file = `${name}.sol`;
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: readFileSync(join(here, file), 'utf8') } },
    settings: {
      evmVersion: 'cancun',
      optimizer: { enabled: false },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const findImports = (path: string) => {
    const prefix = '@openzeppelin/contracts/';
    if (!path.startsWith(prefix)) return { error: `not found: ${path}` };
    return { contents: readFileSync(join(ozRoot, path.slice(prefix.length)), 'utf8') };
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length > 0)
    throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const c = out.contracts[file][name];
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

/** The test token deployed by the dev deployer on `chain`, with the clients the chain tests use. */
export async function deployTestUsdc(chain: LocalChain) {
  const viemChain = chainFor(chain.rpcUrl);
  const pub = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
  const deployer = createWalletClient({
    chain: viemChain,
    transport: http(chain.rpcUrl),
    account: privateKeyToAccount(DEPLOYER_KEY),
  });
  const { abi, bytecode } = compileTestUsdc();
  const usdc = (await pub.waitForTransactionReceipt({ hash: await deployer.deployContract({ abi, bytecode }) }))
    .contractAddress!;
  /** Mints `amount` micro-USDC to `to` and waits for the receipt. */
  const mint = async (to: Address, amount: bigint) => {
    await pub.waitForTransactionReceipt({
      hash: await deployer.writeContract({ address: usdc, abi, functionName: 'mint', args: [to, amount] }),
    });
  };
  const balanceOf = (who: Address) =>
    pub.readContract({ address: usdc, abi: EIP3009_ABI, functionName: 'balanceOf', args: [who] });
  return { viemChain, pub, deployer, abi, usdc, mint, balanceOf };
}
