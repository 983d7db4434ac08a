// The isocast operator page. It holds no data of its own: it asks for the admin token, keeps it in
// sessionStorage (this tab only), and loads admin/data.json with an Authorization header, so the
// token never travels in a URL. Every value from the data is set through textContent or an SVG
// text node, never parsed as HTML; charts are inline SVG drawn here (no external assets).
'use strict';

const TOKEN_KEY = 'isocast.adminToken';
const REFRESH_MS = 30000;
const PALETTE = ['#1f5fbf', '#1c7c54', '#b3541e', '#8a3ffc', '#a3212a', '#0f7c8c', '#7a6a00', '#c2408a', '#5b6475'];
const SVG_NS = 'http://www.w3.org/2000/svg';

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = String(v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// Integer micro-USDC to a dollar string without floating-point rounding: at least two decimals,
// more only when the amount has them ($0.0045).
function usd(micro) {
  const m = Math.max(0, Math.trunc(Number(micro) || 0));
  const whole = Math.floor(m / 1e6);
  let frac = String(m % 1e6)
    .padStart(6, '0')
    .replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return '$' + whole.toLocaleString('en-US') + '.' + frac;
}

function short(hex, head, tail) {
  if (typeof hex !== 'string' || hex.length <= head + tail + 1) return hex || '';
  return hex.slice(0, head) + '…' + hex.slice(-tail);
}

const wallet = (w) => el('code', { title: w, text: short(w, 6, 4) });
const hash = (h) =>
  h ? el('code', { title: h, text: short(h, 10, 6) }) : el('span', { class: 'empty', text: 'none' });
const pill = (text, kind) => el('span', { class: 'pill ' + (kind || text), text });

function ago(iso, nowMs) {
  if (!iso) return el('span', { class: 'empty', text: 'never' });
  const s = Math.round((nowMs - Date.parse(iso)) / 1000);
  const text = s < 0 ? 'in ' + span(-s) : span(s) + ' ago';
  return el('time', { datetime: iso, title: iso, text });
}

function span(s) {
  if (s < 90) return s + ' s';
  if (s < 5400) return Math.round(s / 60) + ' min';
  if (s < 172800) return Math.round(s / 3600) + ' h';
  return Math.round(s / 86400) + ' d';
}

// A wide table scrolls inside its own box on a narrow screen; the page itself never does.
function table(columns, rows, empty) {
  if (rows.length === 0) return el('p', { class: 'empty', text: empty });
  return el(
    'div',
    { class: 'table-scroll' },
    el(
      'table',
      { class: 'data' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          columns.map((c) => el('th', { class: c.num ? 'num' : null, text: c.label })),
        ),
      ),
      el(
        'tbody',
        {},
        rows.map((r) =>
          el(
            'tr',
            {},
            columns.map((c) => {
              const v = c.value(r);
              return el('td', { class: c.num ? 'num' : null }, v instanceof Node ? v : String(v ?? ''));
            }),
          ),
        ),
      ),
    ),
  );
}

function legend(entries) {
  return el(
    'div',
    { class: 'legend' },
    entries.map(([label, color]) =>
      el('span', {}, el('span', { class: 'swatch', style: null, 'data-color': color }), label),
    ),
  );
}

// Inline style attributes are blocked by the page's CSP (style-src 'self'), so swatch colours are
// set through the CSSOM, which CSP allows.
function paintSwatches(root) {
  for (const s of root.querySelectorAll('.swatch[data-color]')) s.style.background = s.getAttribute('data-color');
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// Stacked bars: one bar per UTC day for the last 30 days, one segment per city.
function revenueByDayChart(data) {
  const days = [];
  const end = Date.parse(data.generatedAt.slice(0, 10) + 'T00:00:00Z');
  for (let i = 29; i >= 0; i--) days.push(new Date(end - i * 86400000).toISOString().slice(0, 10));
  const cities = [...new Set(data.revenueByDay.map((r) => r.city))].sort();
  const color = (city) => PALETTE[cities.indexOf(city) % PALETTE.length];
  const byDay = new Map(days.map((d) => [d, []]));
  for (const r of data.revenueByDay) if (byDay.has(r.day)) byDay.get(r.day).push(r);
  const totals = days.map((d) => byDay.get(d).reduce((a, r) => a + r.micro, 0));
  const max = niceMax(Math.max(0, ...totals));
  const W = 640,
    H = 220,
    L = 56,
    B = 24,
    T = 8,
    R = 8;
  const bw = (W - L - R) / days.length;
  const y = (micro) => H - B - (micro / max) * (H - B - T);
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Revenue by day, stacked by city' });
  for (const f of [0, 0.5, 1]) {
    root.append(svg('line', { class: 'axis', x1: L, x2: W - R, y1: y(max * f), y2: y(max * f) }));
    root.append(svg('text', { x: L - 6, y: y(max * f) + 4, 'text-anchor': 'end' }, usd(Math.round(max * f))));
  }
  days.forEach((d, i) => {
    let base = 0;
    for (const r of byDay.get(d).sort((a, b) => a.city.localeCompare(b.city))) {
      const rect = svg('rect', {
        x: L + i * bw + 1,
        width: Math.max(1, bw - 2),
        y: y(base + r.micro),
        height: Math.max(0, y(base) - y(base + r.micro)),
        fill: color(r.city),
        'data-day': d,
        'data-city': r.city,
      });
      rect.append(
        svg('title', {}, `${d} ${r.city}: ${usd(r.micro)} (${r.payments} payment${r.payments === 1 ? '' : 's'})`),
      );
      root.append(rect);
      base += r.micro;
    }
    if (i % 5 === 4 || i === days.length - 1)
      root.append(svg('text', { x: L + i * bw + bw / 2, y: H - 6, 'text-anchor': 'middle' }, d.slice(5)));
  });
  const fig = $('revenue-day-chart');
  fig.replaceChildren(
    el('figcaption', { text: 'Revenue per UTC day (stacked by city)' }),
    root,
    legend(cities.map((c) => [c, color(c)])),
  );
  paintSwatches(fig);
}

function hbarChart(target, caption, rows, format) {
  const fig = $(target);
  const max = niceMax(Math.max(0, ...rows.map((r) => r.value)));
  const W = 420,
    rowH = 22,
    L = 110,
    R = 80;
  const H = Math.max(rowH, rows.length * rowH) + 6;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': caption });
  rows.forEach((r, i) => {
    const w = (r.value / max) * (W - L - R);
    root.append(svg('text', { x: L - 6, y: i * rowH + 15, 'text-anchor': 'end' }, r.label));
    const rect = svg('rect', {
      x: L,
      y: i * rowH + 4,
      width: Math.max(r.value > 0 ? 2 : 0, w),
      height: rowH - 8,
      fill: r.color,
      rx: 2,
    });
    rect.append(svg('title', {}, `${r.label}: ${format(r.value)}`));
    root.append(rect);
    root.append(svg('text', { x: L + w + 6, y: i * rowH + 15 }, format(r.value)));
  });
  fig.replaceChildren(
    el('figcaption', { text: caption }),
    rows.length ? root : el('p', { class: 'empty', text: 'nothing yet' }),
  );
}

function renderTotals(data) {
  const t = data.totals;
  const card = (label, value, alert) =>
    el(
      'div',
      { class: 'card' + (alert ? ' alert' : '') },
      el('div', { class: 'label', text: label }),
      el('div', { class: 'value', text: value }),
    );
  $('totals').replaceChildren(
    card('Revenue (applied)', usd(t.revenueMicro)),
    card('Applied payments', t.appliedPayments),
    card('Refunds queued', `${t.refundsQueued} (${usd(t.refundsQueuedMicro)})`, t.refundsQueued > 0),
    card(
      'Payments in doubt',
      t.inDoubtPayments > 0 ? `${t.inDoubtPayments} (oldest ${t.oldestInDoubtSeconds} s)` : '0',
      t.inDoubtPayments > 0,
    ),
    card('Signals stored', t.signals),
    card('Entitlements', t.entitlements),
    card('Deliveries failed', data.deliveries.counts.failed, data.deliveries.counts.failed > 0),
  );
}

function renderRevenue(data) {
  revenueByDayChart(data);
  const byCity = new Map();
  for (const r of data.revenueByDay) byCity.set(r.city, (byCity.get(r.city) || 0) + r.micro);
  const cities = [...byCity.keys()].sort();
  const rows = [...byCity]
    .sort((a, b) => b[1] - a[1])
    .map(([city, micro]) => ({ label: city, value: micro, color: PALETTE[cities.indexOf(city) % PALETTE.length] }));
  hbarChart('revenue-city-chart', 'Revenue by city (30 days)', rows, usd);
  $('revenue-table').replaceChildren(
    table(
      [
        { label: 'Day (UTC)', value: (r) => r.day },
        { label: 'City', value: (r) => r.city },
        { label: 'Payments', value: (r) => r.payments, num: true },
        { label: 'Revenue', value: (r) => usd(r.micro), num: true },
      ],
      [...data.revenueByDay].reverse(),
      'No applied payments in the last 30 days.',
    ),
  );
}

// One line: where the database is replicated, how far behind, the last upload; red when it stalls.
function renderReplication(r) {
  const line = $('replication');
  line.hidden = r === null || r === undefined;
  if (line.hidden) return;
  const last = r.lastSyncAt ? `last upload ${r.lastSyncAt}` : 'no upload yet';
  line.textContent = `replica ${r.replica}: ${r.up ? 'litestream running' : 'litestream DOWN'}, lag ${(r.lagMs / 1000).toFixed(1)} s, ${last}, ${r.failures} failure(s)${r.lastError ? ` (last: ${r.lastError})` : ''}`;
  line.classList.toggle('bad', !r.up || r.lagMs >= 10000);
}

// One line per facilitator (FACILITATOR_URL's list): up or skipped, and why; red while one is down.
function renderFacilitators(list) {
  const line = $('facilitators');
  line.hidden = !list || list.length === 0;
  if (line.hidden) return;
  line.textContent = list
    .map(
      (f) =>
        `facilitator ${f.name}: ${f.up ? 'up' : `DOWN since ${f.downSince} (${f.reason})`}, ${f.answered} answered, ${f.skipped} skipped`,
    )
    .join(' · ');
  line.classList.toggle(
    'bad',
    list.some((f) => !f.up),
  );
}

function renderPoller(data, nowMs) {
  const p = data.poller;
  $('poller-tick').textContent = !p.running
    ? 'No poller runs in this process.'
    : p.lastTick
      ? `Last tick ${new Date(p.lastTick.startedAt).toISOString()} took ${p.lastTick.durationMs} ms: ${p.lastTick.signals} signal(s), ${p.lastTick.errors} error(s).`
      : 'The poller has not finished a tick yet.';
  // Discovery: what the market lists, what is served (CITIES), and why the rest is not.
  const d = data.discovery;
  $('discovery-summary').textContent = !d.at
    ? `CITIES=${d.selection}: ${d.served.length} streams served; no discovery run recorded yet.`
    : `CITIES=${d.selection}: ${d.served.length} streams served; ${d.events} daily-high and daily-low events found at ${d.at}, ${d.notServed.length} not served.`;
  $('discovery-not-served').replaceChildren(
    // One line per reason (31 cities left out by CITIES=spec are one line, not 31 boxes).
    ...d.notServedByReason.map((g) =>
      el(
        'p',
        { class: 'notice' },
        el('strong', { text: `${g.count} ${g.count === 1 ? 'stream' : 'streams'}: ${g.reason}: ` }),
        el('span', { text: g.cities.join(', ') }),
      ),
    ),
  );
  // One line per paused city: its market's rule does not match the catalog, so it gets no signals that day.
  $('poller-paused').replaceChildren(
    ...(p.paused || []).map((x) =>
      el(
        'p',
        { class: 'notice error' },
        el('strong', { text: `${x.displayName} paused for ${x.targetDate}: ` }),
        el('span', { text: x.reason }),
      ),
    ),
  );
  $('poller-table').replaceChildren(
    table(
      [
        { label: 'City', value: (c) => el('span', { title: c.city, text: c.displayName }) },
        {
          label: 'State',
          value: (c) =>
            c.rule && c.rule.status === 'paused'
              ? pill('paused', 'bad')
              : c.failures > 0
                ? pill(`backing off (${c.failures})`, 'bad')
                : c.noMarket
                  ? pill('no market', 'warn')
                  : c.lastOkAt
                    ? pill('ok', 'ok')
                    : pill('waiting', 'warn'),
        },
        {
          label: 'Rule',
          value: (c) => (c.rule ? el('span', { title: c.rule.reason || '', text: ruleText(c.rule) }) : ''),
        },
        {
          label: 'Last reading',
          value: (c) =>
            c.lastReading
              ? `${c.lastReading.high}°${c.lastReading.unit}${c.lastReading.bucket ? ', bucket ' + c.lastReading.bucket : ''} (${c.lastReading.targetDate})`
              : '',
        },
        { label: 'Latest seq', value: (c) => c.latestSeq, num: true },
        { label: 'Last attempt', value: (c) => ago(c.lastAttemptAt, nowMs) },
        { label: 'Last success', value: (c) => ago(c.lastOkAt, nowMs) },
        {
          label: 'Last error',
          value: (c) =>
            c.lastError
              ? el('span', {}, el('span', { class: 'error-text', text: c.lastError }), ' ', ago(c.lastErrorAt, nowMs))
              : '',
        },
        { label: 'Next retry', value: (c) => (c.retryAt ? ago(c.retryAt, nowMs) : '') },
      ],
      p.cities,
      'No cities.',
    ),
  );
}

// `noaa KSEA °F, obs metar`: the day's parsed resolution rule and the feed observing it.
function ruleText(r) {
  const station = r.station && /^[A-Z0-9]{4}$/.test(r.station) ? ' ' + r.station : '';
  const unit = r.unit ? ' °' + r.unit : '';
  const prec = r.precision === 0.1 ? ' 0.1°' : '';
  return `${r.source}${station}${unit}${prec}${r.fallback ? ' (fallback ' + r.fallback + ')' : ''}${r.observedWith ? ', obs ' + r.observedWith : ''}`;
}

function renderPayments(data, nowMs) {
  $('payments-table').replaceChildren(
    table(
      [
        { label: 'When', value: (r) => ago(r.createdAt, nowMs) },
        { label: 'Wallet', value: (r) => wallet(r.wallet) },
        { label: 'City', value: (r) => r.city },
        { label: 'Count', value: (r) => r.count, num: true },
        { label: 'Amount', value: (r) => usd(r.amountMicro), num: true },
        { label: 'Tx hash', value: (r) => hash(r.txHash) },
        { label: 'Outcome', value: (r) => pill(r.status) },
        { label: 'Note', value: (r) => (r.error ? el('span', { class: 'error-text', text: r.error }) : '') },
      ],
      data.recentPayments,
      'No payments yet.',
    ),
  );
  $('refunds-table').replaceChildren(
    table(
      [
        { label: 'Queued', value: (r) => ago(r.createdAt, nowMs) },
        { label: 'Payment', value: (r) => '#' + r.paymentId },
        { label: 'Wallet', value: (r) => wallet(r.wallet) },
        { label: 'Amount', value: (r) => usd(r.amountMicro), num: true },
        { label: 'Tx hash', value: (r) => hash(r.txHash) },
        { label: 'Reason', value: (r) => el('span', { class: 'error-text', text: r.reason }) },
      ],
      data.refunds,
      'No refunds owed.',
    ),
  );
  $('entitlements-table').replaceChildren(
    table(
      [
        { label: 'Wallet', value: (r) => wallet(r.wallet) },
        { label: 'City', value: (r) => r.city },
        { label: 'Paid through seq', value: (r) => r.paidThroughSeq, num: true },
        { label: 'City latest seq', value: (r) => r.latestSeq, num: true },
        { label: 'Total paid signals', value: (r) => r.totalPaidSignals, num: true },
        { label: 'Updated', value: (r) => ago(r.updatedAt, nowMs) },
      ],
      data.entitlements,
      'No entitlements yet.',
    ),
  );
}

function renderDeliveries(data, nowMs) {
  const c = data.deliveries.counts;
  const colors = { sent: '#1c7c54', queued: '#b3541e', sending: '#0f7c8c', failed: '#a3212a' };
  hbarChart(
    'deliveries-chart',
    'Outbox rows by status',
    ['sent', 'queued', 'sending', 'failed'].map((s) => ({ label: s, value: c[s], color: colors[s] })),
    String,
  );
  $('deliveries-table').replaceChildren(
    table(
      [
        { label: 'Updated', value: (r) => ago(r.updatedAt, nowMs) },
        { label: 'Wallet', value: (r) => wallet(r.wallet) },
        { label: 'City', value: (r) => r.city },
        { label: 'Seq', value: (r) => r.seq, num: true },
        { label: 'Bucket', value: (r) => r.bucket },
        { label: 'Status', value: (r) => pill(r.status) },
        { label: 'Attempts', value: (r) => r.attempts, num: true },
        {
          label: 'Last error',
          value: (r) => (r.lastError ? el('span', { class: 'error-text', text: r.lastError }) : ''),
        },
      ],
      data.deliveries.recent,
      'No deliveries yet.',
    ),
  );
}

const STAGES = [
  ['reportToAvailable', 'report → available', '#b3541e'],
  ['availableToObserved', 'available → observed', '#1f5fbf'],
  ['observedToStored', 'observed → stored', '#1c7c54'],
  ['reportToStored', 'report → stored', '#5b6475'],
];

function seconds(ms) {
  if (ms === null || ms === undefined) return '–';
  const s = ms / 1000;
  return (Math.abs(s) < 10 ? s.toFixed(1) : String(Math.round(s))) + ' s';
}

// One row per source and step: the p99 bar, the p90 and p50 bars over it, darker as they shorten.
function latencyChart(target, caption, sources) {
  const rows = sources.flatMap((src) =>
    STAGES.filter(([key]) => src.stages[key].count > 0).map(([key, label, color]) => ({
      label: `${src.channel} ${label}`,
      p: src.stages[key],
      color,
    })),
  );
  const fig = $(target);
  const max = niceMax(Math.max(0, ...rows.map((r) => r.p.p99Ms)));
  const W = 1100,
    rowH = 24,
    L = 230,
    R = 220;
  const H = Math.max(rowH, rows.length * rowH) + 6;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': caption });
  const x = (ms) => (Math.max(0, ms) / max) * (W - L - R);
  rows.forEach((r, i) => {
    root.append(svg('text', { x: L - 6, y: i * rowH + 16, 'text-anchor': 'end' }, r.label));
    [
      ['p99Ms', 0.35],
      ['p90Ms', 0.65],
      ['p50Ms', 1],
    ].forEach(([k, opacity]) => {
      const rect = svg('rect', {
        x: L,
        y: i * rowH + 5,
        width: Math.max(2, x(r.p[k])),
        height: rowH - 10,
        fill: r.color,
        'fill-opacity': opacity,
        rx: 2,
        class: 'latency-bar',
      });
      rect.append(svg('title', {}, `${r.label} ${k.slice(0, 3)}: ${seconds(r.p[k])} (${r.p.count} signals)`));
      root.append(rect);
    });
    const text = `p50 ${seconds(r.p.p50Ms)} · p99 ${seconds(r.p.p99Ms)}`;
    root.append(svg('text', { x: L + x(r.p.p99Ms) + 6, y: i * rowH + 16 }, text));
  });
  fig.replaceChildren(
    el('figcaption', { text: caption }),
    rows.length ? root : el('p', { class: 'empty', text: 'no signals in the last 24 hours' }),
  );
}

function renderLatency(data) {
  const day = (data.latency || []).find((w) => w.window === '24h');
  if (!day) return;
  latencyChart('latency-chart', `${day.signals} signals; bars: p50 (dark), p90, p99 (light)`, day.bySource);
  $('latency-table').replaceChildren(
    table(
      [
        { label: 'City', value: (r) => r.city },
        { label: 'Signals', value: (r) => r.signals, num: true },
        ...STAGES.map(([key, label]) => ({
          label: `${label} p50 / p99`,
          value: (r) => `${seconds(r.stages[key].p50Ms)} / ${seconds(r.stages[key].p99Ms)}`,
          num: true,
        })),
      ],
      day.byCity,
      'No signals in the last 24 hours.',
    ),
  );
}

function render(data) {
  const nowMs = Date.parse(data.generatedAt);
  $('meta').textContent = `payments ${data.paymentMode}, feed ${data.feed}, data as of ${data.generatedAt}`;
  renderReplication(data.replication);
  renderFacilitators(data.facilitators);
  $('disclaimer').textContent = data.disclaimer || '';
  renderTotals(data);
  renderRevenue(data);
  renderPoller(data, nowMs);
  renderLatency(data);
  renderPayments(data, nowMs);
  renderDeliveries(data, nowMs);
  $('dashboard').hidden = false;
  $('controls').hidden = false;
  $('status').hidden = true;
  document.body.setAttribute('data-state', 'ready');
}

function showLogin(message) {
  $('dashboard').hidden = true;
  $('controls').hidden = true;
  $('login').hidden = false;
  $('status').hidden = !message;
  $('status').className = 'notice error';
  $('status').textContent = message || '';
  document.body.setAttribute('data-state', 'login');
  $('token').focus();
}

function showError(message) {
  $('status').hidden = false;
  $('status').className = 'notice error';
  $('status').textContent = message;
  document.body.setAttribute('data-state', 'error');
}

let timer = null;

async function load() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return showLogin('');
  let res;
  try {
    res = await fetch('admin/data.json', {
      headers: { authorization: 'Bearer ' + token },
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (err) {
    return showError('Could not reach the service: ' + err.message);
  }
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    return showLogin('That token was not accepted.');
  }
  if (!res.ok) return showError(`The service answered HTTP ${res.status}.`);
  $('login').hidden = true;
  render(await res.json());
  schedule();
}

// A hidden tab skips refreshes instead of piling them up.
function schedule() {
  clearTimeout(timer);
  timer = setTimeout(() => (document.hidden ? schedule() : load()), REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  $('login').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = $('token').value.trim();
    $('token').value = '';
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $('status').hidden = false;
    $('status').className = 'notice';
    $('status').textContent = 'Loading…';
    load();
  });
  $('refresh').addEventListener('click', () => load());
  $('sign-out').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    clearTimeout(timer);
    showLogin('');
  });
  load();
});
