import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm';
import { privateKeyToAccount } from 'viem/accounts';

const base = process.env.ISOCAST_SERVER ?? 'http://localhost:8402';
const city = process.env.CITY ?? 'nyc';
const account = privateKeyToAccount(process.env.ISOCAST_KEY as `0x${string}`); // isocast keygen makes a test key
const { payTo } = await (await fetch(`${base}/v1/signals/meta?city=${city}`)).json(); // the published wallet

// The standard exact scheme, nothing of isocast's; default spend controls: Base USDC, $1 per payment.
const payFetch = wrapFetchWithPaymentFromConfig(fetch, {
  schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(account) }],
  policies: [(_version, accepts) => accepts.filter((a) => a.payTo.toLowerCase() === payTo.toLowerCase())],
});
const res = await payFetch(`${base}/v1/signals?city=${city}&count=20`); // pays and reads in one request
const page = await res.json();
console.log(`HTTP ${res.status}: read ${page.signals.length} signal(s), entitled through seq ${page.paid_through}`);
const more = await payFetch(`${base}/v1/subscribe?city=${city}&count=20`, { method: 'POST' });
const bought = await more.json();
console.log(`HTTP ${more.status}: bought ${bought.count} more, entitled through seq ${bought.paidThroughSeq}`);
