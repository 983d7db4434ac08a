import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { IsocastExactScheme, registerIsocast } from '@isocast/client';

const base = process.env.ISOCAST_SERVER ?? 'http://localhost:8402';
const city = process.env.CITY ?? 'nyc';
const account = privateKeyToAccount(process.env.ISOCAST_KEY as `0x${string}`); // isocast keygen makes a test key
const { payTo } = await (await fetch(`${base}/v1/signals/meta?city=${city}`)).json(); // the published wallet

const client = new x402Client(); // default spend controls: USDC only, $1 per payment
registerIsocast(client, new IsocastExactScheme(account, { payTo })); // x402 v1 and v2
const payFetch = wrapFetchWithPayment(fetch, client);
const bought = await (await payFetch(`${base}/v1/subscribe?city=${city}&count=20`, { method: 'POST' })).json();
console.log(`bought ${bought.count} ${city} signals, entitled through seq ${bought.paidThroughSeq}`);
const page = await (
  await fetch(`${base}/v1/signals?city=${city}&since=0`, {
    headers: { Authorization: `Bearer ${bought.receiptToken}` },
  })
).json();
console.log(`read ${page.signals.length} signal(s); latest seq ${page.latest}`);
