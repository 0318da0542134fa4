// Tandem operations dashboard: polls the gateway's JSON API on the same origin every 2 s and
// renders it; plots.js draws the history plots from what this file fetches. No framework, nothing fetched from elsewhere; all data is written with
// textContent (prompts and answers are untrusted), never as HTML.
'use strict';

(() => {
  const POLL_MS = 2000;
  const FETCH_TIMEOUT_MS = 8000;
  const KEY_STORAGE = 'tandem.dashboard.apiKey';
  const DASH = '—';
  const TIERS = ['edge', 'cloud', 'human', 'none'];

  const $ = (id) => document.getElementById(id);

  // ----------------------------------------------------------------------------------------
  // Formatting: anything missing, null or not finite renders as a dash.

  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const fmtInt = (v) => (isNum(v) ? Math.round(v).toLocaleString('en-US') : DASH);
  const fmtPct = (v) => (isNum(v) ? `${(v * 100).toFixed(1)}%` : DASH);
  const fmtUsd = (v) => (isNum(v) ? `$${v.toFixed(4)}` : DASH);
  const fmtMs = (v) => {
    if (!isNum(v)) return DASH;
    return `${Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)} ms`;
  };
  const fmtNum = (v, digits = 1) => (isNum(v) ? v.toFixed(digits) : DASH);
  const fmtText = (v) => (v === null || v === undefined || v === '' ? DASH : String(v));
  const fmtDuration = (seconds) => {
    if (!isNum(seconds)) return DASH;
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  };
  // An ISO time as local clock time, with its age relative to the gateway's clock.
  let gatewayNow = null;
  const fmtTime = (iso) => {
    if (typeof iso !== 'string' || iso === '') return DASH;
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return iso;
    const clock = new Date(t).toLocaleTimeString('en-GB', { hour12: false });
    const now = gatewayNow ?? Date.now();
    return now >= t ? `${clock} (${fmtDuration((now - t) / 1000)} ago)` : clock;
  };
  const fmtMsTime = (ms) => (isNum(ms) ? fmtTime(new Date(ms).toISOString()) : DASH);
  // {"a": 2, "b": 1} -> "a 2 · b 1"
  const fmtCounts = (obj) => {
    if (!obj || typeof obj !== 'object') return DASH;
    const parts = Object.entries(obj).map(([k, v]) => `${k} ${fmtInt(v)}`);
    return parts.length ? parts.join(' · ') : DASH;
  };
  const fmtList = (arr) => (Array.isArray(arr) && arr.length
    ? arr.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('; ') : DASH);

  const setText = (id, text) => {
    const el = typeof id === 'string' ? $(id) : id;
    if (el && el.textContent !== text) el.textContent = text;
  };
  const el = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  };
  const row = (cells) => {
    const tr = document.createElement('tr');
    for (const c of cells) tr.append(c instanceof Node ? wrapCell(c) : el('td', c));
    return tr;
  };
  const wrapCell = (node) => {
    const td = document.createElement('td');
    td.append(node);
    return td;
  };
  const replaceRows = (tbody, rows, emptyText, columns) => {
    if (!rows.length) {
      const td = el('td', emptyText, 'muted');
      td.colSpan = columns;
      const tr = document.createElement('tr');
      tr.append(td);
      rows = [tr];
    }
    tbody.replaceChildren(...rows);
  };

  // ----------------------------------------------------------------------------------------
  // API access

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  let apiKey = '';
  try {
    apiKey = sessionStorage.getItem(KEY_STORAGE) || '';
  } catch {
    apiKey = '';  // storage disabled: the key lives only in this page
  }

  async function api(path, { method = 'GET', body } = {}) {
    const headers = { Accept: 'application/json' };
    if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'same-origin',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (err) {
      const why = err && err.name === 'TimeoutError' ? 'timed out' : (err && err.message) || 'network error';
      throw new ApiError(0, `cannot reach the gateway (${why})`);
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      const message = data && data.error && typeof data.error.message === 'string'
        ? data.error.message : (text.slice(0, 200) || res.statusText || 'request failed');
      throw new ApiError(res.status, message);
    }
    if (data === null) throw new ApiError(res.status, 'the gateway answered with no JSON');
    return data;
  }

  function describeError(what, err) {
    const status = err instanceof ApiError ? err.status : 0;
    const message = err && err.message ? err.message : String(err);
    if (status === 401) {
      return apiKey
        ? `${what}: 401 Unauthorized — the API key was not accepted (${message}). Enter an operator key above.`
        : `${what}: 401 Unauthorized — this gateway requires an API key. Enter an operator (admin) key above.`;
    }
    if (status === 403) {
      return `${what}: 403 Forbidden — ${message}. Use an operator key (admin: true).`;
    }
    if (status === 0) return `${what}: ${message}`;
    return `${what}: HTTP ${status} — ${message}`;
  }

  // ----------------------------------------------------------------------------------------
  // Status rendering

  function renderGateway(g) {
    if (!g) return setText('gateway-info', DASH);
    const parts = [
      g.version ? `v${g.version}` : null,
      g.replica ? `replica ${g.replica}` : null,
      isNum(g.uptime_s) ? `up ${fmtDuration(g.uptime_s)}` : null,
      g.store ? `store ${g.store}` : null,
      g.ready === false ? 'NOT READY' : null,
    ].filter(Boolean);
    setText('gateway-info', parts.length ? parts.join(' · ') : DASH);
  }

  function renderTraffic(t) {
    t = t || {};
    const recent = t.recent || {};
    const total = t.total || {};
    const share = recent.share || {};
    const byTier = recent.by_tier || {};
    setText('traffic-window', isNum(t.window_s) ? `recent ${fmtDuration(t.window_s)}` : DASH);
    for (const tier of TIERS) {
      const s = share[tier];
      setText(`share-${tier}`, fmtPct(s));
      setText(`recent-${tier}`, isNum(byTier[tier]) ? `${fmtInt(byTier[tier])} req` : DASH);
      const bar = $(`bar-${tier}`);
      // CSSOM, not a style attribute: allowed under Content-Security-Policy default-src 'self'.
      bar.style.width = isNum(s) ? `${Math.max(0, Math.min(1, s)) * 100}%` : '0%';
      bar.title = `${tier} ${fmtPct(s)}`;
    }
    $('share-bar').classList.toggle('empty', !TIERS.some((tier) => isNum(share[tier]) && share[tier] > 0));
    setText('requests-total', fmtInt(total.requests));
    setText('requests-recent', fmtInt(recent.requests));
    setText('escalation-rate', fmtPct(recent.escalation_rate));
    setText('escalations', `${fmtInt(total.escalations)} / ${fmtInt(total.errors)}`);
    setText('total-by-tier', fmtCounts(total.by_tier));
    setText('total-by-pattern', fmtCounts(total.by_pattern));
  }

  function renderLatency(latency, ttft) {
    const rows = [];
    const add = (label, stats, id) => {
      stats = stats || {};
      // A tier with no samples reports zeros: show dashes, not "0 ms".
      const has = isNum(stats.count) && stats.count > 0;
      const v = (x) => (has ? fmtMs(x) : DASH);
      const cells = [label, fmtInt(stats.count), v(stats.p50), v(stats.p90), v(stats.p99)];
      const tr = row(cells);
      tr.title = `${label}: mean ${v(stats.mean)}, max ${v(stats.max)}`;
      if (id) tr.children[2].dataset.testid = id;
      rows.push(tr);
    };
    for (const tier of ['edge', 'cloud', 'human']) {
      add(tier, latency && latency[tier], `latency-${tier}-p50`);
    }
    for (const tier of ['edge', 'cloud', 'human']) {
      if (ttft && ttft[tier]) add(`TTFT ${tier}`, ttft[tier], `ttft-${tier}-p50`);
    }
    replaceRows($('latency-body'), rows, DASH, 5);
  }

  function renderCost(cost, tokens) {
    cost = cost || {};
    const saved = isNum(cost.saved_usd)
      ? `${fmtUsd(cost.saved_usd)}${isNum(cost.saved_share) ? ` (${fmtPct(cost.saved_share)})` : ''}`
      : DASH;
    setText('cost-saved', saved);
    // Four decimals on the page; the exact amount on hover (test traffic costs fractions of a cent).
    const exact = (v) => (isNum(v) ? `$${v.toPrecision(4)}` : '');
    $('cost-saved').title = exact(cost.saved_usd);
    for (const [id, v] of [['cost-cloud', cost.cloud_usd], ['cost-allcloud', cost.all_cloud_usd], ['cost-edge', cost.edge_usd]]) {
      setText(id, fmtUsd(v));
      $(id).title = exact(v);
    }
    const tok = (t) => (t ? `${fmtInt(t.prompt)} / ${fmtInt(t.completion)}` : DASH);
    setText('tokens-edge', tok(tokens && tokens.edge));
    setText('tokens-cloud', tok(tokens && tokens.cloud));
  }

  function renderQuality(q) {
    q = q || {};
    setText('q-rate', isNum(q.edge_good_rate)
      ? `${fmtPct(q.edge_good_rate)} (${fmtInt(q.edge_good)} good)` : DASH);
    setText('q-labelled', fmtInt(q.labelled));
    setText('q-sources', fmtCounts(q.by_source));
    setText('q-canary', fmtPct(q.canary_agreement));
  }

  function renderDevice(d) {
    d = d || {};
    const state = $('device-state');
    setText(state, fmtText(d.state));
    state.className = `pill state-${typeof d.state === 'string' ? d.state.replace(/[^a-z_-]/gi, '') : 'unknown'}`;
    setText('device-since', d.since ? `since ${fmtTime(d.since)}` : '');
    setText('device-reasons', fmtList(d.reasons));
    let temp = isNum(d.max_temp_c) ? `${d.max_temp_c.toFixed(1)} °C` : DASH;
    if (Array.isArray(d.zones) && d.zones.length) {
      temp += ` (${d.zones.length} zone${d.zones.length === 1 ? '' : 's'})`;
      $('device-temp').title = d.zones
        .map((z) => `${fmtText(z && (z.type || z.name))}: ${isNum(z && z.temp_c) ? z.temp_c.toFixed(1) : DASH} °C`)
        .join('\n');
    }
    setText('device-temp', temp);
    let battery;
    if (d.on_battery === true) battery = `on battery, ${isNum(d.battery_percent) ? `${fmtNum(d.battery_percent, 0)}%` : DASH}`;
    else if (d.on_battery === false) battery = `mains${isNum(d.battery_percent) ? `, ${fmtNum(d.battery_percent, 0)}%` : ''}`;
    else battery = DASH;
    setText('device-battery', battery);
    const dec = d.decode_tokens_per_s || {};
    setText('device-decode', isNum(dec.ewma) || isNum(dec.baseline)
      ? `${fmtNum(dec.ewma, 0)} / ${fmtNum(dec.baseline, 0)}${isNum(dec.ratio) ? ` (${fmtPct(dec.ratio)})` : ''}`
      : DASH);
    setText('device-policy', fmtText(d.policy));
    setText('device-problems', fmtList(d.problems));
  }

  function renderModels(m) {
    m = m || {};
    const edge = m.edge || {};
    setText('edge-model', edge.loaded === false ? `not loaded${edge.name ? ` (${edge.name})` : ''}` : fmtText(edge.name));
    const sha = typeof edge.sha256 === 'string' && edge.sha256 ? edge.sha256.slice(0, 12) : null;
    setText('edge-model-detail', [
      sha ? `sha256 ${sha}` : null,
      edge.version ? `version ${edge.version}` : null,
      edge.quantization ? edge.quantization : null,
    ].filter(Boolean).join(' · ') || DASH);
    const allowed = $('edge-model-allowed');
    setText(allowed, edge.allowed === true ? 'allowed' : edge.allowed === false ? 'NOT ALLOWED' : DASH);
    allowed.className = `pill ${edge.allowed === false ? 'bad' : edge.allowed === true ? 'good' : ''}`;
    const problem = [edge.error, edge.problem].filter((x) => x !== null && x !== undefined && x !== '');
    const p = $('edge-model-problem');
    p.hidden = problem.length === 0;
    setText(p, problem.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(' · '));

    const cloud = Array.isArray(m.cloud) ? m.cloud : [];
    replaceRows($('cloud-models'), cloud.map((c) => {
      c = c || {};
      const changes = el('span', fmtInt(c.changes), isNum(c.changes) && c.changes > 0 ? 'warn' : '');
      return row([fmtText(c.upstream), fmtText(c.model), fmtText(c.reported_model), changes, fmtTime(c.last_seen)]);
    }), 'No cloud upstreams', 5);

    const skew = m.skew || {};
    const alerts = Array.isArray(skew.alerts) ? skew.alerts : [];
    const list = $('skew-alerts');
    if (!alerts.length) {
      list.replaceChildren(el('li', 'No skew alerts', 'muted'));
    } else {
      list.replaceChildren(...alerts.map((a) => {
        a = a || {};
        const li = el('li', undefined, 'alert');
        li.append(el('code', fmtText(a.code)), document.createTextNode(` ${fmtText(a.detail)} `),
          el('span', a.since ? `since ${fmtTime(a.since)}` : '', 'muted small'));
        return li;
      }));
    }
    const canary = skew.canary || {};
    setText('canary-summary', canary.enabled === false ? 'disabled'
      : canary.enabled === true
        ? `every ${fmtDuration(canary.interval_s)} · ${fmtInt(canary.runs)} runs · last ${fmtPct(canary.last_agreement)} · mean ${fmtPct(canary.mean_agreement)}`
        : DASH);
    const history = Array.isArray(canary.history) ? canary.history.slice(-10).reverse() : [];
    replaceRows($('canary-history'), history.map((h) => {
      h = h || {};
      return row([fmtTime(h.at), fmtPct(h.agreement), fmtInt(h.agreed), fmtInt(h.prompts), fmtInt(h.failed)]);
    }), 'No canary runs yet', 5);
  }

  function renderOffline(o) {
    const banner = $('offline-banner');
    const offline = !!(o && o.offline === true);
    banner.hidden = !offline;
    document.body.classList.toggle('is-offline', offline);
    setText('offline-since', offline && o.since ? `since ${fmtTime(o.since)}` : '');
    let notice = offline && o.notice !== null && o.notice !== undefined ? o.notice : '';
    if (notice && typeof notice !== 'string') notice = notice.message || JSON.stringify(notice);
    setText('offline-notice', notice ? `— ${notice}` : '');
  }

  function renderCircuits(circuits) {
    const list = $('circuits');
    circuits = Array.isArray(circuits) ? circuits : [];
    if (!circuits.length) {
      list.replaceChildren(el('li', 'No cloud upstreams', 'muted'));
      return;
    }
    list.replaceChildren(...circuits.map((c) => {
      c = c || {};
      const li = el('li', undefined, 'circuit');
      li.dataset.testid = `circuit-${c.upstream === undefined || c.upstream === null ? '' : c.upstream}`;
      const state = typeof c.state === 'string' ? c.state : '';
      const name = el('b', fmtText(c.upstream));
      const pill = el('span', fmtText(c.state), `pill circ-${state.replace(/[^a-z_-]/gi, '') || 'unknown'}`);
      const online = el('span', c.online === true ? 'online' : c.online === false ? 'offline' : DASH,
        c.online === false ? 'bad-text' : 'muted');
      const detail = [];
      if (isNum(c.consecutive_failures) && c.consecutive_failures > 0) detail.push(`${c.consecutive_failures} failures`);
      if (isNum(c.cooldown_remaining_ms) && c.cooldown_remaining_ms > 0) detail.push(`retry in ${fmtMs(c.cooldown_remaining_ms)}`);
      if (c.shared_open_until) detail.push(`shared open until ${fmtTime(c.shared_open_until)}`);
      if (c.last_error) detail.push(`last error: ${typeof c.last_error === 'string' ? c.last_error : JSON.stringify(c.last_error)}`);
      li.append(name, pill, online);
      if (detail.length) li.append(el('div', detail.join(' · '), 'muted small detail'));
      return li;
    }));
  }

  function renderGaming(g) {
    g = g || {};
    setText('gaming-summary', g.enabled === false ? 'detection off'
      : g.enabled === true
        ? `${fmtInt(g.clients_tracked)} clients · population escalation ${fmtPct(g.population_escalation_share)} over ${fmtDuration(g.window_s)}`
        : DASH);
    const flagged = Array.isArray(g.flagged) ? g.flagged : [];
    $('flagged-clients').dataset.count = String(flagged.length);
    replaceRows($('flagged-body'), flagged.map((f) => {
      f = f || {};
      const capped = el('span', f.capped === true ? 'capped' : f.capped === false ? 'no' : DASH,
        f.capped === true ? 'pill bad' : 'muted');
      const tr = row([fmtText(f.client), fmtInt(f.requests), fmtPct(f.escalation_share),
        fmtPct(f.rest_escalation_share), isNum(f.p_value) ? f.p_value.toExponential(1) : DASH,
        capped, fmtList(f.reasons)]);
      tr.dataset.client = typeof f.client === 'string' ? f.client : '';
      return tr;
    }), g.enabled === false ? 'Gaming detection is off' : 'No flagged clients', 7);
  }

  function renderOps(s) {
    const edge = s.edge || {};
    setText('edge-queue', edge.queued === undefined && edge.active === undefined ? DASH
      : `${fmtInt(edge.queued)} / ${fmtInt(edge.active)}`);
    const r = s.reviews || {};
    setText('review-counts', `${fmtInt(r.pending)} / ${fmtInt(r.answered)} / ${fmtInt(r.rejected)}`);
    const p = s.privacy || {};
    setText('privacy-pins', fmtInt(p.pins));
    setText('privacy-detectors', fmtCounts(p.by_detector));
  }

  function renderStatus(s) {
    const g = s.gateway || {};
    const now = typeof g.now === 'string' ? Date.parse(g.now) : NaN;
    gatewayNow = Number.isFinite(now) ? now : null;
    renderGateway(s.gateway);
    renderOffline(s.offline);
    renderTraffic(s.traffic);
    renderLatency(s.latency_ms, s.ttft_ms);
    renderCost(s.cost, s.tokens);
    renderQuality(s.quality);
    renderDevice(s.device);
    renderModels(s.models);
    renderCircuits(s.circuits);
    renderGaming(s.gaming);
    renderOps(s);
  }

  // ----------------------------------------------------------------------------------------
  // Review queue: keyed by ticket id, so a refresh never clears an answer being typed.

  const reviewItems = new Map();  // id -> <li>
  const template = $('review-template');

  function setReviewResult(text, kind) {
    const r = $('review-result');
    r.textContent = text;
    r.className = `result ${kind || ''}`;
  }

  function makeReviewItem(ticket) {
    const li = template.content.firstElementChild.cloneNode(true);
    const id = String(ticket.id);
    li.dataset.ticket = id;
    const textarea = li.querySelector('.answer');
    textarea.id = `answer-${reviewItems.size}-${Date.now()}`;
    li.querySelector('.answer-label').htmlFor = textarea.id;
    li.querySelector('.do-answer').addEventListener('click', () => resolveTicket(li, 'answer'));
    li.querySelector('.do-reject').addEventListener('click', () => resolveTicket(li, 'reject'));
    li.querySelector('.use-draft').addEventListener('click', () => {
      textarea.value = li.querySelector('.draft').textContent;
      textarea.focus();
    });
    return li;
  }

  function updateReviewItem(li, t) {
    setText(li.querySelector('.ticket-id'), fmtText(t.id));
    setText(li.querySelector('.reason'), fmtText(t.reason));
    const meta = [t.client ? `client ${t.client}` : null, t.model ? `model ${t.model}` : null,
      isNum(t.created_at_ms) ? `created ${fmtMsTime(t.created_at_ms)}` : null].filter(Boolean);
    setText(li.querySelector('.meta'), meta.join(' · '));
    setText(li.querySelector('.prompt'), fmtText(t.prompt));
    const draft = t.draft && typeof t.draft === 'object' ? t.draft : null;
    const hasDraft = !!(draft && typeof draft.answer === 'string' && draft.answer !== '');
    li.querySelector('.draft-field').hidden = !hasDraft;
    li.querySelector('.use-draft').hidden = !hasDraft;
    setText(li.querySelector('.draft-label'), hasDraft && draft.tier ? `Draft (${draft.tier})` : 'Draft');
    setText(li.querySelector('.draft'), hasDraft ? draft.answer : '');
  }

  function renderReviews(list) {
    const tickets = (list && Array.isArray(list.data) ? list.data : []).filter((t) => t && t.id !== undefined);
    const seen = new Set();
    const container = $('review-list');
    let previous = null;
    for (const t of tickets) {
      const id = String(t.id);
      seen.add(id);
      let li = reviewItems.get(id);
      if (!li) {
        li = makeReviewItem(t);
        reviewItems.set(id, li);
      }
      if (!li.classList.contains('busy')) updateReviewItem(li, t);
      // Keep the gateway's order without moving nodes that are already in place (focus stays).
      const want = previous ? previous.nextSibling : container.firstChild;
      if (want !== li) container.insertBefore(li, want);
      previous = li;
    }
    for (const [id, li] of reviewItems) {
      if (!seen.has(id) && !li.classList.contains('busy')) {
        li.remove();
        reviewItems.delete(id);
      }
    }
    setText('review-summary', `${fmtInt(tickets.length)} pending`);
    const empty = $('review-empty');
    empty.hidden = tickets.length > 0;
    setText(empty, 'No pending tickets.');
  }

  async function resolveTicket(li, action) {
    const id = li.dataset.ticket;
    const textarea = li.querySelector('.answer');
    const text = textarea.value.trim();
    const itemError = li.querySelector('.item-error');
    if (action === 'answer' && !text) {
      itemError.textContent = 'Write an answer first.';
      textarea.focus();
      return;
    }
    itemError.textContent = '';
    li.classList.add('busy');
    for (const b of li.querySelectorAll('button')) b.disabled = true;
    try {
      const body = action === 'answer' ? { answer: text } : { note: text };
      const ticket = await api(`/v1/tandem/reviews/${encodeURIComponent(id)}/${action}`, { method: 'POST', body });
      const done = ticket && ticket.status ? ticket.status : action === 'answer' ? 'answered' : 'rejected';
      setReviewResult(`Ticket ${id} ${done}${ticket && ticket.reviewer ? ` by ${ticket.reviewer}` : ''}.`, 'ok');
      li.remove();
      reviewItems.delete(id);
    } catch (err) {
      const message = describeError(`${action === 'answer' ? 'Answer' : 'Reject'} ${id}`, err);
      setReviewResult(message, 'error');
      itemError.textContent = err instanceof ApiError && err.status === 409
        ? 'Already closed by someone else.' : 'Failed; see the message above.';
    } finally {
      li.classList.remove('busy');
      for (const b of li.querySelectorAll('button')) b.disabled = false;
    }
    refresh();
  }

  // ----------------------------------------------------------------------------------------
  // Polling

  let timer = null;
  let inFlight = null;
  let again = false;
  let lastOk = null;

  function scheduleNext() {
    clearTimeout(timer);
    timer = setTimeout(refresh, POLL_MS);
  }

  function refresh() {
    if (inFlight) {
      again = true;  // one more round right after this one (e.g. a new key)
      return inFlight;
    }
    clearTimeout(timer);
    inFlight = poll().finally(() => {
      inFlight = null;
      if (again) {
        again = false;
        refresh();
      } else {
        scheduleNext();
      }
    });
    return inFlight;
  }

  // The plots' series (plots.js): at most every SERIES_MS (a bucket is 10 s; redrawing more
  // often shows nothing new), and at once when the operator picks another window.
  const SERIES_MS = 5000;
  let seriesAt = 0;
  let seriesWindow = null;

  async function pollSeries() {
    const windowS = window.TandemPlots.windowSeconds();
    if (windowS === seriesWindow && Date.now() - seriesAt < SERIES_MS) return;
    const doc = await api(`/v1/tandem/series?window_s=${encodeURIComponent(windowS)}`);
    window.TandemPlots.render(doc);
    seriesAt = Date.now();
    seriesWindow = windowS;
  }

  async function poll() {
    const [status, reviews, series] = await Promise.allSettled([
      api('/v1/tandem/status'),
      api('/v1/tandem/reviews?status=pending&limit=50'),
      pollSeries(),
    ]);
    const errors = [];
    if (series.status === 'rejected') errors.push(describeError('Plots', series.reason));
    if (status.status === 'fulfilled') {
      try {
        renderStatus(status.value);
        lastOk = new Date();
      } catch (err) {
        errors.push(`Rendering the status failed: ${err && err.message}`);
      }
    } else {
      errors.push(describeError('Status', status.reason));
    }
    if (reviews.status === 'fulfilled') {
      renderReviews(reviews.value);
    } else {
      errors.push(describeError('Reviews', reviews.reason));
      setText('review-summary', DASH);
      const status = reviews.reason instanceof ApiError ? reviews.reason.status : 0;
      if (status === 401 || status === 403) {
        // Not allowed to see them (any more): the prompts are not shown to this key.
        for (const [id, li] of reviewItems) {
          if (!li.classList.contains('busy')) {
            li.remove();
            reviewItems.delete(id);
          }
        }
        setText('review-empty', 'Reviews need an operator key.');
        $('review-empty').hidden = false;
      }
    }
    const statusLine = $('status-line');
    if (errors.length) {
      // The status and the reviews usually fail alike (same key): say it once.
      const unique = [...new Set(errors.map((e) => e.replace(/^(Status|Reviews|Plots): /, '')))];
      statusLine.textContent = unique.length === 1 ? unique[0] : errors.join(' | ');
      statusLine.className = 'error';
    } else {
      statusLine.textContent = `Live · refreshing every ${POLL_MS / 1000} s`;
      statusLine.className = 'ok';
    }
    $('main').classList.toggle('stale', status.status !== 'fulfilled');
    setText('last-updated', lastOk
      ? `Updated ${lastOk.toLocaleTimeString('en-GB', { hour12: false })}` : 'Not updated yet');
  }

  // ----------------------------------------------------------------------------------------
  // Controls

  function useKey(key) {
    apiKey = key.trim();
    try {
      if (apiKey) sessionStorage.setItem(KEY_STORAGE, apiKey);
      else sessionStorage.removeItem(KEY_STORAGE);
    } catch {
      // storage disabled: keep the key in memory only
    }
    refresh();
  }

  function init() {
    const input = $('api-key');
    input.value = apiKey;
    $('key-form').addEventListener('submit', (event) => {
      event.preventDefault();
      useKey(input.value);
    });
    input.addEventListener('change', () => {
      if (input.value.trim() !== apiKey) useKey(input.value);
    });
    $('key-clear').addEventListener('click', () => {
      input.value = '';
      useKey('');
    });
    $('refresh').addEventListener('click', () => refresh());
    window.TandemPlots.init(() => refresh());
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) refresh();
    });
    refresh();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
