// Tandem's chat playground (GET /chat): talk to `tandem` or any model the gateway lists, stream
// the answer, and watch the routing decide: which tier answered and why, the confidence of
// each token, escalations and revisions as they happen, cost and cost saved, and the privacy
// scan's findings (masked hints only). Plain DOM, no inline script or style (the page is
// served under the dashboard's CSP), no dependencies. The API key is kept in sessionStorage,
// shared with the dashboard, and sent only to this origin.
(() => {
  'use strict';

  const KEY_STORAGE = 'tandem.dashboard.apiKey';
  const $ = (id) => document.getElementById(id);

  let apiKey = '';
  try {
    apiKey = sessionStorage.getItem(KEY_STORAGE) || '';
  } catch {
    apiKey = '';  // storage disabled: the key lives only in this page
  }

  const history = [];  // the conversation so far, as chat messages
  let controller = null;  // the request in flight

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (name === 'class') node.className = value;
      else if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function headers() {
    const h = { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' };
    if (apiKey) h.Authorization = `Bearer ${apiKey}`;
    const pattern = $('pattern').value;
    if (pattern) h['X-Tandem-Pattern'] = pattern;
    return h;
  }

  function setStatus(text, kind = '') {
    $('status').textContent = text;
    $('status').className = kind || 'muted';
  }

  function errorText(status, body) {
    const message = body && body.error && typeof body.error.message === 'string'
      ? body.error.message : `HTTP ${status}`;
    if (status === 401) return `${message} — enter an API key above.`;
    return message;
  }

  // ------------------------------------------------------------------------------------------
  // Models

  async function loadModels() {
    let res;
    try {
      res = await fetch('/v1/models', { headers: headers(), cache: 'no-store' });
    } catch (err) {
      setStatus(`cannot reach the gateway (${err.message})`, 'error');
      return;
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      setStatus(errorText(res.status, body), 'error');
      return;
    }
    const select = $('model');
    const chosen = select.value || 'tandem';
    select.replaceChildren();
    for (const model of body.data || []) {
      const label = model.id === 'tandem' ? 'tandem (routed)' : `${model.id} (${model.owned_by || 'model'})`;
      select.append(el('option', { value: model.id, text: label }));
    }
    select.value = [...select.options].some((o) => o.value === chosen) ? chosen : 'tandem';
    setStatus('Ready');
  }

  // ------------------------------------------------------------------------------------------
  // One turn on the page

  class Turn {
    constructor(prompt) {
      $('empty-hint')?.remove();
      $('log').append(el('article', { class: 'turn user' }, el('div', { class: 'bubble', text: prompt })));
      this.text = el('div', { class: 'text', 'data-testid': 'answer-text' });
      this.bubble = el('div', { class: 'bubble' }, this.text);
      this.events = el('ul', { 'data-testid': 'events' });
      this.why = el('aside', { class: 'why', 'data-testid': 'decision' },
                    el('h3', { text: 'Tier' }), el('div', { 'data-testid': 'tier', text: 'waiting…' }));
      this.article = el('article', { class: 'turn assistant', 'data-testid': 'answer' }, this.bubble, this.why);
      $('log').append(this.article);
      this.article.scrollIntoView({ block: 'end' });
      this.answer = '';
      this.probabilities = [];
      this.chart = null;
    }

    setTier(tier) {
      this.article.classList.remove('tier-edge', 'tier-cloud', 'tier-human');
      this.article.classList.add(`tier-${tier}`);
      const slot = this.why.querySelector('[data-testid=tier]');
      slot.replaceChildren(el('span', { class: `badge ${tier}`, text: tier }));
    }

    append(text, logprobs) {
      this.answer += text;
      this.text.textContent = this.answer;
      for (const entry of logprobs || []) {
        if (typeof entry.logprob === 'number') this.probabilities.push(Math.exp(entry.logprob));
      }
      this.drawConfidence();
    }

    event(text) {
      if (!this.events.isConnected) {
        this.why.append(el('h3', { text: 'As it happened' }), this.events);
      }
      this.events.append(el('li', { class: 'event', text }));
    }

    // Everything streamed so far is withdrawn: kept visible, struck through, above the new text.
    revise(revision) {
      if (this.answer) this.bubble.insertBefore(el('div', { class: 'withdrawn', 'data-testid': 'withdrawn', text: this.answer }), this.text);
      this.answer = '';
      this.text.textContent = '';
      this.probabilities = [];
      this.drawConfidence();
      const r = revision || {};
      this.event(`revised: ${r.from_tier || '?'} → ${r.to_tier || '?'}${r.reason ? ` (${r.reason})` : ''}`);
      if (r.to_tier) this.setTier(r.to_tier);
    }

    fail(message) {
      this.bubble.append(el('div', { class: 'error', 'data-testid': 'error', text: message }));
      const slot = this.why.querySelector('[data-testid=tier]');
      if (slot.textContent === 'waiting…') slot.textContent = 'no answer';
    }

    // Probability of each sampled token, as a small line chart (0 at the bottom, 1 at the top).
    drawConfidence() {
      if (!this.chart) {
        if (this.probabilities.length === 0) return;
        const ns = 'http://www.w3.org/2000/svg';
        this.chart = document.createElementNS(ns, 'svg');
        this.chart.setAttribute('class', 'confidence');
        this.chart.setAttribute('viewBox', '0 0 100 40');
        this.chart.setAttribute('preserveAspectRatio', 'none');
        this.chart.setAttribute('data-testid', 'confidence-chart');
        this.chart.setAttribute('role', 'img');
        const half = document.createElementNS(ns, 'line');
        for (const [k, v] of Object.entries({ x1: 0, x2: 100, y1: 20, y2: 20 })) half.setAttribute(k, v);
        this.line = document.createElementNS(ns, 'polyline');
        this.chart.append(half, this.line);
        this.chartTitle = el('h3', { text: 'Confidence per token' });
        this.chartNote = el('div', { class: 'muted', 'data-testid': 'confidence-note' });
        this.why.append(this.chartTitle, this.chart, this.chartNote);
      }
      const n = this.probabilities.length;
      const points = this.probabilities.map((p, i) => {
        const x = n === 1 ? 50 : (i / (n - 1)) * 100;
        return `${x.toFixed(2)},${(40 - p * 38 - 1).toFixed(2)}`;
      });
      this.line.setAttribute('points', points.join(' '));
      const mean = n ? this.probabilities.reduce((a, b) => a + b, 0) / n : 0;
      const low = n ? Math.min(...this.probabilities) : 0;
      this.chart.setAttribute('aria-label', `token probabilities: mean ${mean.toFixed(2)}, lowest ${low.toFixed(2)}`);
      this.chartNote.textContent = n ? `${n} tokens · mean ${mean.toFixed(2)} · lowest ${low.toFixed(2)}` : '';
    }

    // The decision record (`tandem`) of the final chunk, in words.
    decide(record) {
      if (record.tier) this.setTier(record.tier);
      const why = this.why;
      const words = el('div', { 'data-testid': 'decision-pattern',
                                text: `pattern ${record.pattern || '?'}${record.tiers && record.tiers.length > 1 ? ` · tiers ${record.tiers.join(' → ')}` : ''}` });
      why.querySelector('[data-testid=tier]').append(' ', words);
      const reasons = ((record.routing && record.routing.decision && record.routing.decision.reasons) || [])
        .map((r) => `${r.detail || r.code}`);
      const list = reasons.length ? reasons : (record.reasons || []);
      if (list.length) {
        why.append(el('h3', { text: 'Why' }),
                   el('ul', { 'data-testid': 'reasons' }, ...list.map((r) => el('li', { text: r }))));
      }
      for (const f of record.fallbacks || []) this.event(`fell back: ${f.from} → ${f.to} (${f.reason})`);
      if (record.escalation) {
        const e = record.escalation;
        this.event(`escalated${e.reason ? `: ${e.reason}` : ''}${typeof e.after_tokens === 'number' ? ` after ${e.after_tokens} tokens` : ''}`);
      }
      if (record.verification && record.verification.status) this.event(`cloud verification: ${record.verification.status}`);
      if (record.degraded) this.event(`degraded: ${record.degraded}`);
      const cost = record.cost_usd || {};
      const money = (v) => (typeof v === 'number' ? `$${v.toFixed(6)}` : '—');
      why.append(el('h3', { text: 'Cost' }), el('div', {
        'data-testid': 'cost',
        text: `edge ${money(cost.edge)} · cloud ${money(cost.cloud)} · all-cloud ${money(cost.all_cloud)} · saved ${money(cost.saved)}`,
      }));
      const privacy = record.routing && record.routing.signals && record.routing.signals.privacy;
      const findings = (privacy && privacy.findings) || [];
      why.append(el('h3', { text: 'Privacy' }), el('div', {
        class: findings.length ? 'privacy' : 'muted',
        'data-testid': 'privacy',
        text: findings.length
          ? findings.map((f) => `${f.detector} ${f.masked} in ${f.field || 'the text'}`).join('; ')
          : 'nothing found',
      }));
      why.append(el('div', { class: 'muted', 'data-testid': 'left-device',
                             text: record.data_left_device ? 'sent to a cloud upstream' : 'stayed on the device' }));
      if (typeof record.latency_ms === 'number') {
        why.append(el('div', { class: 'muted', text: `${record.latency_ms.toFixed(0)} ms${record.ttft_ms ? ` · first token ${record.ttft_ms.toFixed(0)} ms` : ''}` }));
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Streaming

  // Server-sent events from a fetch body: yields {event, data} as they complete.
  async function* events(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) yield { event, data: data.join('\n') };
      }
    }
  }

  async function send(prompt) {
    const turn = new Turn(prompt);
    history.push({ role: 'user', content: prompt });
    const maxTokens = Number($('max-tokens').value) || 128;
    controller = new AbortController();
    $('send').disabled = true;
    $('stop').disabled = false;
    setStatus('Answering…');
    let record = null;
    try {
      const res = await fetch('/v1/chat/completions', {
        method: 'POST', headers: headers(), signal: controller.signal,
        body: JSON.stringify({
          model: $('model').value || 'tandem', messages: history, stream: true,
          stream_options: { include_usage: true }, logprobs: true, max_tokens: maxTokens,
        }),
      });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        turn.fail(errorText(res.status, body));
        history.pop();
        setStatus('Failed', 'error');
        return;
      }
      const tier = res.headers.get('X-Tandem-Tier');
      if (tier) turn.setTier(tier);
      for await (const { event, data } of events(res.body)) {
        if (data === '[DONE]') break;
        let chunk;
        try {
          chunk = JSON.parse(data);
        } catch {
          continue;
        }
        if (chunk.error) {
          turn.fail(chunk.error.message || 'the stream failed');
          if (chunk.tandem) turn.decide(chunk.tandem);
          continue;
        }
        if (event === 'tandem.revision' || (chunk.tandem && chunk.tandem.revision && !chunk.tandem.tier)) {
          turn.revise(chunk.tandem && chunk.tandem.revision);
          continue;
        }
        const choice = chunk.choices && chunk.choices[0];
        if (choice && choice.delta && typeof choice.delta.content === 'string') {
          turn.append(choice.delta.content, choice.logprobs && choice.logprobs.content);
        }
        if (chunk.tandem && chunk.tandem.tier) record = chunk.tandem;
      }
      if (record) turn.decide(record);
      history.push({ role: 'assistant', content: turn.answer });
      setStatus('Ready');
    } catch (err) {
      if (err.name === 'AbortError') {
        turn.fail('stopped');
        history.push({ role: 'assistant', content: turn.answer });
        setStatus('Stopped');
      } else {
        turn.fail(`cannot reach the gateway (${err.message})`);
        history.pop();
        setStatus('Failed', 'error');
      }
    } finally {
      controller = null;
      $('send').disabled = false;
      $('stop').disabled = true;
    }
  }

  // ------------------------------------------------------------------------------------------
  // Controls

  function useKey(key) {
    apiKey = key.trim();
    try {
      if (apiKey) sessionStorage.setItem(KEY_STORAGE, apiKey);
      else sessionStorage.removeItem(KEY_STORAGE);
    } catch {
      // storage disabled: keep the key in memory only
    }
    loadModels();
  }

  function init() {
    const input = $('api-key');
    input.value = apiKey;
    $('key-form').addEventListener('submit', (event) => {
      event.preventDefault();
      useKey(input.value);
    });
    $('key-clear').addEventListener('click', () => {
      input.value = '';
      useKey('');
    });
    $('composer').addEventListener('submit', (event) => {
      event.preventDefault();
      const prompt = $('prompt').value.trim();
      if (!prompt || controller) return;
      $('prompt').value = '';
      send(prompt);
    });
    $('prompt').addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        $('composer').requestSubmit();
      }
    });
    $('stop').addEventListener('click', () => controller && controller.abort());
    $('new-chat').addEventListener('click', () => {
      history.length = 0;
      $('log').replaceChildren();
      setStatus('New chat');
    });
    loadModels();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
