// Renders /openapi.json and /discovery into the isocast API page. Served by the instance itself
// (no CDN, no fonts, no external requests), so the page works offline and from the single binary.
// Text is only ever set through textContent: nothing from the documents is parsed as HTML.
'use strict';

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

// Route texts are written in Markdown-ish prose: `x` spans become <code>, never literal backticks.
function richText(text) {
  const parts = String(text || '').split('`');
  if (parts.length % 2 === 0) return [String(text || '').replace(/`/g, '')];
  return parts.map((part, i) => (i % 2 ? el('code', { text: part }) : part));
}

function refName(ref) {
  return typeof ref === 'string' ? ref.split('/').pop() : '';
}

function schemaLabel(schema) {
  if (!schema) return 'any';
  if (schema.$ref) return el('a', { href: '#schema-' + refName(schema.$ref), text: refName(schema.$ref) });
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.anyOf)
    return el('span', {}, ...schema.anyOf.flatMap((s, i) => (i ? [' | ', schemaLabel(s)] : [schemaLabel(s)])));
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (schema.type === 'array') return el('span', {}, 'array of ', schemaLabel(schema.items));
  return (schema.type || 'object') + (schema.format ? ' (' + schema.format + ')' : '');
}

function propertyTable(schema) {
  const props = schema?.properties;
  if (!props) return null;
  const required = new Set(schema.required || []);
  return el(
    'table',
    { class: 'props' },
    el('thead', {}, el('tr', {}, el('th', { text: 'field' }), el('th', { text: 'type' }), el('th', { text: 'notes' }))),
    el(
      'tbody',
      {},
      Object.entries(props).map(([name, p]) =>
        el(
          'tr',
          {},
          el(
            'td',
            {},
            el('code', { text: name }),
            required.has(name) ? '' : el('span', { class: 'optional', text: ' optional' }),
          ),
          el('td', {}, schemaLabel(p)),
          el('td', {}, richText(p.description)),
        ),
      ),
    ),
  );
}

function securityText(op) {
  if (!op.security || op.security.length === 0) return el('span', { class: 'badge free', text: 'free' });
  const alts = op.security.map((req) => Object.keys(req).join(' + ')).join(' or ');
  return el('span', { class: 'badge paid', text: alts });
}

function operationCard(path, method, op) {
  const id = op.operationId || method + path;
  const params = op.parameters || [];
  const responses = Object.entries(op.responses || {});
  const tryable = method === 'get' && params.every((p) => !p.required) && (!op.security || op.security.length === 0);
  const output = el('pre', { class: 'try-output', hidden: true });
  const card = el(
    'article',
    { class: 'endpoint', id: 'op-' + id, 'data-endpoint': method.toUpperCase() + ' ' + path },
    el(
      'h3',
      {},
      el('span', { class: 'method ' + method, text: method.toUpperCase() }),
      ' ',
      el('code', { class: 'path', text: path }),
      ' ',
      securityText(op),
    ),
    el('p', { class: 'op-summary' }, richText(op.summary)),
    op.description ? el('p', { class: 'op-description' }, richText(op.description)) : null,
    params.length
      ? el(
          'table',
          { class: 'props' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              el('th', { text: 'parameter' }),
              el('th', { text: 'in' }),
              el('th', { text: 'type' }),
              el('th', { text: 'notes' }),
            ),
          ),
          el(
            'tbody',
            {},
            params.map((p) =>
              el(
                'tr',
                {},
                el(
                  'td',
                  {},
                  el('code', { text: p.name }),
                  p.required ? '' : el('span', { class: 'optional', text: ' optional' }),
                ),
                el('td', { text: p.in }),
                el('td', {}, schemaLabel(p.schema)),
                el('td', {}, richText(p.description)),
              ),
            ),
          ),
        )
      : null,
    el(
      'ul',
      { class: 'responses' },
      responses.map(([status, r]) => {
        const content = r.content || {};
        const [type, media] = Object.entries(content)[0] || [];
        return el(
          'li',
          {},
          el('span', { class: 'status s' + status[0], text: status }),
          ' ',
          richText(r.description),
          type
            ? el('span', { class: 'media' }, ' — ', type, media?.schema ? [' ', schemaLabel(media.schema)] : [])
            : null,
        );
      }),
    ),
  );
  if (tryable) {
    const button = el('button', { type: 'button', text: 'Try it' });
    button.addEventListener('click', async () => {
      output.hidden = false;
      output.textContent = 'GET ' + path + ' …';
      try {
        const res = await fetch(path.replace(/^\//, ''), { headers: { accept: 'application/json' } });
        const text = await res.text();
        let shown = text;
        try {
          shown = JSON.stringify(JSON.parse(text), null, 2);
        } catch {
          /* not JSON: show as is */
        }
        output.textContent =
          res.status + ' ' + (res.headers.get('content-type') || '') + '\n\n' + shown.slice(0, 20000);
      } catch (err) {
        output.textContent = 'request failed: ' + err;
      }
    });
    card.append(button, output);
  }
  return card;
}

function renderEndpoints(doc) {
  const list = document.getElementById('endpoint-list');
  const byTag = new Map();
  const index = el('tbody');
  // The buyer's routes first, in the document's tag order; the operator's (admin token) last.
  const tagOrder = (doc.tags || []).map((t) => t.name);
  const rank = (op) => {
    const tag = op.tags?.[0] || 'other';
    if (tag === 'operations') return 1000;
    const i = tagOrder.indexOf(tag);
    return i < 0 ? 999 : i;
  };
  const operations = Object.entries(doc.paths || {})
    .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [path, method, op]))
    .sort((a, b) => rank(a[2]) - rank(b[2]));
  for (const [path, method, op] of operations) {
    const tag = op.tags?.[0] || 'other';
    if (!byTag.has(tag)) byTag.set(tag, []);
    byTag.get(tag).push(operationCard(path, method, op));
    index.append(
      el(
        'tr',
        {},
        el('td', {}, el('span', { class: 'method ' + method, text: method.toUpperCase() })),
        el('td', {}, el('a', { href: '#op-' + (op.operationId || method + path) }, el('code', { text: path }))),
        el('td', {}, securityText(op)),
        el('td', {}, richText(op.summary)),
      ),
    );
  }
  const tagInfo = new Map((doc.tags || []).map((t) => [t.name, t.description]));
  list.append(
    el(
      'table',
      { class: 'props index' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['method', 'path', 'access', 'summary'].map((h) => el('th', { text: h })),
        ),
      ),
      index,
    ),
  );
  for (const [tag, cards] of byTag) {
    list.append(
      el(
        'section',
        { class: 'tag', id: 'tag-' + tag },
        el('h3', { class: 'tag-name', text: tag }),
        tagInfo.get(tag) ? el('p', { class: 'tag-description' }, richText(tagInfo.get(tag))) : null,
        cards,
      ),
    );
  }
  document.getElementById('endpoints').hidden = false;
}

function renderSchemas(doc) {
  const schemas = doc.components?.schemas || {};
  const list = document.getElementById('schema-list');
  for (const [name, schema] of Object.entries(schemas)) {
    const raw = el('pre', { class: 'json', text: JSON.stringify(schema, null, 2) });
    list.append(
      el(
        'details',
        { class: 'schema', id: 'schema-' + name },
        el('summary', {}, el('code', { text: name }), schema.description ? ' — ' + schema.description : ''),
        propertyTable(schema) || raw,
        propertyTable(schema) ? el('details', {}, el('summary', { text: 'JSON Schema' }), raw) : null,
      ),
    );
  }
  document.getElementById('schemas').hidden = false;
  const security = document.getElementById('security-list');
  for (const [name, s] of Object.entries(doc.components?.securitySchemes || {})) {
    const how =
      s.type === 'http'
        ? 'Authorization: ' + s.scheme + ' (' + (s.bearerFormat || '') + ')'
        : s.in + ' header ' + s.name;
    security.append(el('dt', {}, el('code', { text: name }), ' — ', how), el('dd', { text: s.description || '' }));
  }
  document.getElementById('security').hidden = false;
}

function renderBuying(discovery) {
  const p = discovery.pricing;
  if (p) {
    document.getElementById('pricing').append(
      el(
        'table',
        { class: 'props' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ['tier', 'from count', 'unit price (USDC)', 'total at minimum'].map((h) => el('th', { text: h })),
          ),
        ),
        el(
          'tbody',
          {},
          p.tiers.map((t) =>
            el(
              'tr',
              {},
              el('td', { text: t.name }),
              el('td', { text: t.minCount }),
              el('td', { text: t.unitPriceUsd }),
              el('td', { text: t.price }),
            ),
          ),
        ),
      ),
      el('p', {
        text:
          'Network ' +
          p.network +
          ', settlement wallet ' +
          (p.payTo || 'not configured') +
          ', USDC ' +
          p.asset +
          '. ' +
          p.rule +
          '.',
      }),
    );
  }
  const pay = discovery.payment || {};
  for (const s of pay.steps || []) document.getElementById('pay-steps').append(el('li', { text: s }));
  for (const s of pay.reading || []) document.getElementById('read-steps').append(el('li', { text: s }));
  document.getElementById('buying').hidden = false;
}

async function main() {
  const status = document.getElementById('status');
  try {
    const [docRes, discRes] = await Promise.all([fetch('openapi.json'), fetch('discovery')]);
    if (!docRes.ok) throw new Error('openapi.json answered ' + docRes.status);
    const doc = await docRes.json();
    document.getElementById('version').textContent = 'API ' + doc.info.version;
    if (doc.info.summary) document.getElementById('summary').textContent = doc.info.summary;
    document.getElementById('disclaimer').textContent = doc['x-disclaimer'] || '';
    if (discRes.ok) renderBuying(await discRes.json());
    renderEndpoints(doc);
    renderSchemas(doc);
    status.hidden = true;
    document.body.dataset.ready = 'true';
  } catch (err) {
    status.textContent = 'Could not load the API description: ' + err.message + '. Read llms-full.txt instead.';
    document.body.dataset.ready = 'error';
  }
}

main();
