// admitd admission dashboard: plain JavaScript, no dependencies. Every
// call goes to this page's own origin (relative URLs under /dashboard/),
// so it works with a client certificate, with kubectl proxy, or behind
// any proxy prefix. Data is put in the page as text, never as HTML.
'use strict';

const maxRows = 500;
const shown = new Set();
let selected = '';

function $(sel) { return document.querySelector(sel); }

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'title') e.title = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === '') continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function fetchOK(path, accept) {
  const r = await fetch(path, { credentials: 'same-origin', headers: { Accept: accept || 'application/json' } });
  if (!r.ok) {
    let msg = r.status + ' ' + r.statusText;
    try { const st = await r.json(); if (st.message) msg = st.message; } catch (e) { /* not a Status */ }
    throw new Error(msg);
  }
  return r;
}
async function getJSON(path) { return (await fetchOK(path)).json(); }

function setStatus(cls, text) {
  const s = $('#status');
  s.className = 'status ' + cls;
  s.textContent = text;
}

// ---- live decisions ----

function resourceOf(d) {
  let r = d.resource + (d.apiGroup ? '.' + d.apiGroup : '');
  if (d.subresource) r += '/' + d.subresource;
  return r;
}

function timeOf(iso) {
  const t = new Date(iso);
  return isNaN(t) ? iso : t.toLocaleTimeString([], { hour12: false }) + '.' + String(t.getMilliseconds()).padStart(3, '0');
}

function latencyText(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1) return (ms * 1000).toFixed(0) + ' µs';
  if (ms < 1000) return ms.toFixed(ms < 10 ? 2 : 1) + ' ms';
  return (ms / 1000).toFixed(2) + ' s';
}

function decisionRow(d, fresh) {
  const nsName = [d.namespace, d.name].filter(Boolean).join('/');
  const tr = el('tr', { 'data-audit-id': d.auditID, class: fresh ? 'new' : '' },
    el('td', { class: 'mono' }, timeOf(d.time)),
    el('td', { title: d.client || '' }, d.client ? d.user + ' · ' + d.client : d.user),
    el('td', {}, d.verb + (d.dryRun ? ' (dry run)' : '')),
    el('td', {}, resourceOf(d)),
    el('td', {}, nsName),
    el('td', { class: 'decision ' + d.decision, title: d.rejectedBy ? 'rejected by ' + d.rejectedBy : '' }, d.decision),
    el('td', { class: 'num' }, latencyText(d.latencyMillis)));
  tr.addEventListener('click', () => showTrace(d.auditID, tr));
  return tr;
}

function addDecision(d, fresh, atEnd) {
  if (shown.has(d.auditID)) return;
  shown.add(d.auditID);
  const body = $('#decisions tbody');
  const row = decisionRow(d, fresh);
  if (atEnd) body.append(row); else body.prepend(row);
  while (body.rows.length > maxRows) {
    const last = body.rows[body.rows.length - 1];
    shown.delete(last.dataset.auditId);
    last.remove();
  }
}

async function loadRecent() {
  try {
    const list = await getJSON('api/decisions?limit=100');
    // newest first: rows not yet shown go below the ones the stream added
    for (const d of list) addDecision(d, false, true);
  } catch (e) {
    $('#live-note').textContent = 'recent decisions: ' + e.message;
  }
}

function connect() {
  const es = new EventSource('api/events');
  let opened = false;
  es.addEventListener('open', () => {
    setStatus('live', 'live');
    if (opened) loadRecent(); // fill what a reconnect missed
    opened = true;
  });
  es.addEventListener('error', () => {
    setStatus(es.readyState === EventSource.CLOSED ? 'error' : 'reconnecting',
      es.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting');
  });
  es.addEventListener('decision', (e) => addDecision(JSON.parse(e.data), true, false));
  es.addEventListener('dropped', (e) => {
    const n = JSON.parse(e.data).dropped;
    $('#live-note').textContent = n + ' events dropped while this page fell behind';
  });
}

// ---- trace view ----

function lineClass(line) {
  for (const o of ['denied', 'error', 'failed-open', 'skipped', 'mutated']) {
    if (line.includes(': ' + o)) return 'l-' + o;
  }
  return /^[\s│]*(why|patch|warning|annotation|error|[+~-] )/.test(line.replace(/^[\s│├└─]*/, ' ')) ? 'l-detail' : '';
}

async function showTrace(id, row) {
  selected = id;
  document.querySelectorAll('#decisions tr.selected').forEach((r) => r.classList.remove('selected'));
  if (row) row.classList.add('selected');
  const pane = $('#trace');
  pane.hidden = false;
  $('#trace-json').href = 'api/traces/' + encodeURIComponent(id);
  const pre = $('#trace-tree');
  pre.textContent = 'loading…';
  try {
    const text = await (await fetchOK('api/traces/' + encodeURIComponent(id) + '?output=tree', 'text/plain')).text();
    if (selected !== id) return;
    pre.textContent = '';
    for (const line of text.replace(/\n$/, '').split('\n')) {
      pre.append(el('span', { class: lineClass(line) }, line), '\n');
    }
    pre.dataset.auditId = id;
  } catch (e) {
    pre.textContent = 'no trace: ' + e.message;
  }
}

// ---- statistics ----

function pct(rate) { return (rate * 100).toFixed(rate > 0 && rate < 0.01 ? 2 : 1) + '%'; }

async function loadStats() {
  try {
    const s = await getJSON('api/stats');
    const body = $('#stats tbody');
    body.textContent = '';
    for (const c of s.calls) {
      body.append(el('tr', {},
        el('td', {}, c.plugin), el('td', {}, c.configuration), el('td', {}, c.name),
        el('td', { class: 'num' }, c.calls),
        el('td', { class: 'num' }, latencyText(c.p50)), el('td', { class: 'num' }, latencyText(c.p90)),
        el('td', { class: 'num' }, latencyText(c.p99)),
        el('td', { class: 'num' + (c.errors ? ' rate-bad' : '') }, c.errors + ' (' + pct(c.errorRate) + ')'),
        el('td', { class: 'num' + (c.failedOpen ? ' rate-bad' : '') }, c.failedOpen + ' (' + pct(c.failOpenRate) + ')'),
        el('td', { class: 'num' }, c.rejected)));
    }
    if (!s.calls.length) body.append(el('tr', {}, el('td', { colspan: 10, class: 'empty' }, 'no webhook or policy called yet')));
    $('#stats-note').textContent = s.requests + ' requests since ' + new Date(s.since).toLocaleString() +
      (s.dropped ? ', ' + s.dropped + ' not counted (server busy)' : '') + ', ' + s.streams + ' live viewer(s)';
  } catch (e) {
    $('#stats-note').textContent = e.message;
  }
}

// ---- compliance (background audit) ----

function objectText(o) {
  return o.kind + ' ' + (o.namespace ? o.namespace + '/' : '') + o.name;
}

async function loadCompliance() {
  try {
    const c = await getJSON('api/compliance');
    const body = $('#compliance-table tbody');
    body.textContent = '';
    if (!c.enabled) {
      $('#compliance-note').textContent = 'background audit off (admitd serve --background-audit)';
      return;
    }
    const r = c.results;
    for (const b of r.bindings) {
      const rows = b.violations.map((v) => ['violation', v]).concat((b.errors || []).map((v) => ['error', v]));
      if (!rows.length) {
        body.append(el('tr', { class: 'compliant' }, el('td', {}, b.policy), el('td', {}, b.binding),
          el('td', { class: 'num' }, b.evaluated), el('td', { colspan: 2, class: 'empty' }, 'compliant')));
      }
      for (const [kind, v] of rows) {
        body.append(el('tr', { class: kind }, el('td', {}, b.policy), el('td', {}, b.binding),
          el('td', { class: 'num' }, b.evaluated), el('td', { class: 'mono object' }, objectText(v.object)),
          el('td', {}, (kind === 'error' ? 'error: ' : '') + v.messages.join('; '))));
      }
      if (b.truncated) body.append(el('tr', {}, el('td', { colspan: 5, class: 'empty' }, b.truncated + ' more not listed')));
    }
    if (!r.bindings.length) body.append(el('tr', {}, el('td', { colspan: 5, class: 'empty' }, 'no binding with the Audit action')));
    $('#compliance-note').textContent = r.finished && !r.finished.startsWith('0001')
      ? r.objects + ' objects scanned, finished ' + new Date(r.finished).toLocaleTimeString([], { hour12: false })
      : 'first scan under way';
  } catch (e) {
    $('#compliance-note').textContent = e.message;
  }
}

// ---- configuration ----

function badges(findings) {
  return (findings || []).map((f) => el('span', { class: 'badge sev-' + f.severity, title: f.message + '\n\nWhy: ' + f.why + '\nFix: ' + f.fix }, f.id + ' ' + f.severity));
}

function findingLines(findings) {
  return (findings || []).map((f) => el('div', { class: 'finding-text' }, el('span', { class: 'badge sev-' + f.severity }, f.id), f.message));
}

function ruleText(r) {
  const list = (xs) => (xs && xs.length ? xs.join(',') : '∅');
  let s = list(r.operations) + ' ' + list(r.apiGroups.map((g) => (g === '' ? 'core' : g))) + '/' + list(r.apiVersions) + ' ' + list(r.resources);
  if (r.resourceNames && r.resourceNames.length) s += ' names=' + r.resourceNames.join(',');
  if (r.scope && r.scope !== '*') s += ' (' + r.scope + ')';
  return s;
}

function rulesCell(rules) { return (rules || []).map((r) => el('div', { class: 'mono' }, ruleText(r))); }
function selectorText(s) { return s ? s : 'any'; }
function conditionsCell(conds) { return (conds || []).map((c) => el('div', { class: 'mono', title: c.expression }, c.name)); }

function renderWebhooks(cfg) {
  const list = $('#webhook-list');
  list.textContent = '';
  if (!cfg.webhookConfigurations.length) list.append(el('p', { class: 'empty' }, 'no webhook configurations'));
  for (const c of cfg.webhookConfigurations) {
    const table = el('table', {}, el('thead', {}, el('tr', {}, ['Webhook', 'Client', 'Rules', 'Namespace selector', 'Object selector', 'Match conditions',
      'Failure policy', 'Timeout', 'Side effects', 'Lint'].map((h) => el('th', {}, h)))));
    const body = el('tbody');
    for (const w of c.webhooks) {
      body.append(el('tr', { 'data-webhook': w.name },
        el('td', {}, el('strong', {}, w.name), w.reinvocationPolicy ? el('div', { class: 'kind' }, 'reinvocation ' + w.reinvocationPolicy) : ''),
        el('td', { class: 'mono' }, w.client),
        el('td', {}, rulesCell(w.rules)),
        el('td', { class: 'mono' }, selectorText(w.namespaceSelector)),
        el('td', { class: 'mono' }, selectorText(w.objectSelector)),
        el('td', {}, conditionsCell(w.matchConditions)),
        el('td', { class: 'fp-' + w.failurePolicy }, w.failurePolicy),
        el('td', { class: 'num' }, w.timeoutSeconds + 's'),
        el('td', {}, w.sideEffects),
        el('td', {}, badges(w.findings))));
    }
    table.append(body);
    list.append(el('div', { class: 'card', 'data-config': c.name },
      el('div', { class: 'card-title' }, el('strong', {}, c.name), el('span', { class: 'kind' }, c.kind), badges(c.findings)),
      findingLines(c.findings), table));
  }
}

function scopeLines(label, m) {
  if (!m) return [];
  return [el('div', {}, label + ': ', m.rules.map(ruleText).join('; ') || 'no rules'),
    m.excludeRules && m.excludeRules.length ? el('div', {}, 'excluding: ' + m.excludeRules.map(ruleText).join('; ')) : '',
    el('div', {}, 'namespaces: ' + selectorText(m.namespaceSelector) + ', objects: ' + selectorText(m.objectSelector))];
}

function bindingBlock(b) {
  return el('div', { class: 'card' },
    el('div', { class: 'card-title' }, el('strong', {}, b.name), el('span', { class: 'kind' }, b.kind + (b.policy ? ' → ' + b.policy : '')), badges(b.findings)),
    b.validationActions ? el('div', {}, 'actions: ' + b.validationActions.join(', ')) : '',
    b.paramRef ? el('div', {}, 'params: ' + b.paramRef) : '',
    el('div', { class: 'mono' }, scopeLines('matchResources', b.match)),
    findingLines(b.findings));
}

function renderPolicies(cfg) {
  const list = $('#policy-list');
  list.textContent = '';
  if (!cfg.policies.length && !cfg.bindingsWithoutPolicy.length) list.append(el('p', { class: 'empty' }, 'no admission policies'));
  for (const p of cfg.policies) {
    list.append(el('div', { class: 'card', 'data-policy': p.name },
      el('div', { class: 'card-title' }, el('strong', {}, p.name), el('span', { class: 'kind' }, p.kind),
        el('span', { class: 'fp-' + p.failurePolicy }, 'failurePolicy ' + p.failurePolicy), badges(p.findings)),
      p.paramKind ? el('div', {}, 'params: ' + p.paramKind) : '',
      el('div', { class: 'mono' }, scopeLines('matchConstraints', p.match)),
      p.matchConditions ? el('div', {}, 'match conditions: ', conditionsCell(p.matchConditions)) : '',
      el('div', {}, p.expressions.length + ' expression(s)'),
      p.expressions.map((x) => el('div', { class: 'mono' }, x)),
      findingLines(p.findings),
      p.bindings.length ? p.bindings.map(bindingBlock) : el('div', { class: 'empty' }, 'no bindings: the policy applies to nothing')));
  }
  if (cfg.bindingsWithoutPolicy.length) {
    list.append(el('h3', {}, 'Bindings of missing policies'), cfg.bindingsWithoutPolicy.map(bindingBlock));
  }
}

function renderFindings(cfg) {
  const body = $('#finding-table tbody');
  body.textContent = '';
  for (const f of cfg.findings) {
    body.append(el('tr', {},
      el('td', {}, el('span', { class: 'badge sev-' + f.severity }, f.severity)),
      el('td', { class: 'mono', title: f.why }, f.id),
      el('td', {}, f.object.kind + ' ' + (f.object.namespace ? f.object.namespace + '/' : '') + f.object.name),
      el('td', {}, f.webhook || ''),
      el('td', {}, f.message),
      el('td', { class: 'finding-text' }, f.fix)));
  }
  if (!cfg.findings.length) body.append(el('tr', {}, el('td', { colspan: 6, class: 'empty' }, 'no findings')));
  const s = cfg.summary;
  $('#findings-note').textContent = s.errors + ' error(s), ' + s.warnings + ' warning(s), ' + s.infos + ' info';
}

async function loadConfig() {
  try {
    const cfg = await getJSON('api/config');
    renderWebhooks(cfg);
    renderPolicies(cfg);
    renderFindings(cfg);
    $('#config-note').textContent = 'read ' + new Date(cfg.readAt).toLocaleTimeString([], { hour12: false });
  } catch (e) {
    $('#config-note').textContent = 'could not read the configuration: ' + e.message;
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('#trace-close').addEventListener('click', () => { $('#trace').hidden = true; selected = ''; });
  $('#reload-config').addEventListener('click', loadConfig);
  connect();
  loadRecent();
  loadConfig();
  loadStats();
  loadCompliance();
  setInterval(loadStats, 5000);
  setInterval(loadCompliance, 5000);
  setInterval(loadConfig, 30000);
});
