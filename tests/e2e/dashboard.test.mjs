// End-to-end: the operations dashboard (`GET /`) in a headless Chromium against `tandem serve`.
//
// Starts llama.cpp's llama-server as the cloud tier and `tandem serve` in front of it with
// API keys (an operator key with `admin: true`, a plain client key) and the human review
// tier enabled (keyword "lawsuit"), then drives the page the gateway embeds with Debian's
// chromium through playwright-core: the 401 message without a key, live numbers with the
// operator key, numbers that follow traffic, the history plots (uPlot) with a flagged client
// and a window switch, answering a review ticket, a narrow screen — and no console error or
// CSP violation anywhere.
//
// Environment (tests/e2e/run.sh sets the first three):
//   TANDEM_BINARY           the gateway (default: <repo>/build/tandem)
//   LLAMA_SERVER            llama.cpp's server (default: scripts/build-llama.sh's prefix + /bin/llama-server)
//   TANDEM_MODEL            the GGUF both tiers serve (default: <repo>/models/stories260K.gguf)
//   TANDEM_CHROMIUM         the browser (default: /usr/bin/chromium)
//   TANDEM_REQUIRE_BROWSER  set (CI): a missing browser fails instead of skipping
//   TANDEM_SCREENSHOT_DIR   (optional) receives dashboard-desktop.png and dashboard-phone.png,
//                           the README's screenshots

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  READY_TIMEOUT_MS, freePorts, makeTempDir, portIsFree, removeTempDir, resolvePaths, sleep,
  startGateway, startLlamaServer,
} from './harness.mjs';

const CHROMIUM = process.env.TANDEM_CHROMIUM || '/usr/bin/chromium';
const REQUIRE_BROWSER = Boolean(process.env.TANDEM_REQUIRE_BROWSER);
const SCREENSHOT_DIR = process.env.TANDEM_SCREENSHOT_DIR;

// The gateway reads the keys from its environment (key_env), as in production. The gamer is a
// client that sends everything to the cloud, so that the gaming monitor flags it.
const OPERATOR_KEY = 'tandem-dashboard-operator-key';
const CLIENT_KEY = 'tandem-dashboard-client-key';
const GAMER_KEY = 'tandem-dashboard-gamer-key';
const PLOTS = ['requests', 'latency', 'ttft', 'decode', 'cost', 'cloud', 'gaming'];
const EDGE_MODEL = 'stories-edge';
const CLOUD_MODEL = 'cloud-stories';
const UPSTREAM = 'local-llama';

// The page polls every 2 s: a passing check needs a round or two; 30 s (many rounds, even with
// a slow gateway behind each) is reached only when the page never gets there.
const UI_TIMEOUT_MS = 30_000;

const browserMissing = !fs.existsSync(CHROMIUM);
const skipReason = browserMissing && !REQUIRE_BROWSER
  ? `no browser at ${CHROMIUM} (install Debian's chromium, or set TANDEM_CHROMIUM); ` +
    'set TANDEM_REQUIRE_BROWSER=1 to make this a failure'
  : false;
if (skipReason) console.error(`dashboard e2e skipped: ${skipReason}`);

// ---------------------------------------------------------------------------------------------
// The gateway's config

function gatewayConfig({ gatewayPort, llamaPort, model }) {
  const q = JSON.stringify;  // JSON strings are valid YAML scalars
  return `# Written by tests/e2e/dashboard.test.mjs
server:
  host: 127.0.0.1
  port: ${gatewayPort}
  shutdown_grace_ms: 1000
  api_keys:
    - name: operator
      key_env: TANDEM_DASHBOARD_OPERATOR_KEY
      admin: true
    - name: app
      key_env: TANDEM_DASHBOARD_CLIENT_KEY
    - name: gamer
      key_env: TANDEM_DASHBOARD_GAMER_KEY
edge:
  model: ${q(model)}
  name: ${EDGE_MODEL}
cloud:
  upstreams:
    - name: ${UPSTREAM}
      base_url: ${q(`http://127.0.0.1:${llamaPort}/v1`)}
      models: {${CLOUD_MODEL}: stories}
      prices: {input_per_million: 0.15, output_per_million: 0.60}
routing:
  consistency:
    enabled: false           # each request's pattern header decides, not an earlier answer
  review:
    enabled: true
    keywords:
      - {name: legal, words: [lawsuit]}
operations:
  gaming:                    # judged on a test's worth of traffic, not production's
    min_requests: 5
    min_population: 10
`;
}

// ---------------------------------------------------------------------------------------------
// The page's number formats, restated: the DOM must show the API's numbers in these forms.

const DASH = '—';
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const fmtInt = (v) => (isNum(v) ? Math.round(v).toLocaleString('en-US') : DASH);
const fmtPct = (v) => (isNum(v) ? `${(v * 100).toFixed(1)}%` : DASH);
const fmtUsd = (v) => (isNum(v) ? `$${v.toFixed(4)}` : DASH);
const fmtMs = (v) => (isNum(v) ? `${Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)} ms` : DASH);

// Polls `check` (which throws, e.g. an assertion) until it passes; on timeout throws its last
// error, prefixed with what was awaited.
async function eventually(what, check, { timeoutMs = UI_TIMEOUT_MS, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() >= deadline) {
        err.message = `${what}: still failing after ${timeoutMs} ms: ${err.message}`;
        throw err;
      }
    }
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// The suite

describe('dashboard in a headless browser', { skip: skipReason, timeout: 240_000 }, () => {
  let llama;
  let gateway;
  let origin;
  let tmpDir;
  let ports = [];
  let browser;
  let page;

  // Everything the browser reports that a healthy page must not produce. 401/403 answers of
  // the JSON API are expected exactly when the request carried no key (401) or the client's
  // key (403); Chromium also logs each of them to the console, which is judged at check time
  // (the console and network events may arrive in either order).
  const problems = [];
  const expectedApiErrors = [];  // {url, status}
  const loadFailures = [];       // console "Failed to load resource": {url, status, text}
  let navigating = false;
  const isApi = (url) => new URL(url).pathname.startsWith('/v1/tandem/');
  const isFavicon = (url) => new URL(url).pathname === '/favicon.ico';

  const api = async (pathname, { key = OPERATOR_KEY, method = 'GET', body, headers = {} } = {}) => {
    const res = await fetch(origin + pathname, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { res, status: res.status, json, text };
  };
  const status = async () => {
    const { status: code, json, text } = await api('/v1/tandem/status');
    assert.equal(code, 200, `GET /v1/tandem/status with the operator key: ${text}`);
    return json;
  };
  const chat = (content, { pattern, key = CLIENT_KEY, maxTokens = 8 } = {}) => api('/v1/chat/completions', {
    key,
    method: 'POST',
    headers: pattern ? { 'X-Tandem-Pattern': pattern } : {},
    body: { model: 'tandem', messages: [{ role: 'user', content }], temperature: 0, max_tokens: maxTokens },
  });
  // What plots.js says a plot holds: its points, and its values that are neither null nor 0.
  const plotCounts = (id) => page.getByTestId(`plot-${id}`).evaluate(
    (el) => ({ points: Number(el.dataset.points ?? -1), values: Number(el.dataset.values ?? -1) }));
  // CSP violations the page reported (the init script below collects them).
  const cspViolations = () => page.evaluate(() => window.__cspViolations ?? []);
  const text = (testId) => page.getByTestId(testId).first().textContent({ timeout: 5_000 });
  const assertNoProblems = (when) => {
    const unexplained = loadFailures
      // Nothing on the page asks for a favicon; the browser does, and the gateway may have none.
      .filter((f) => !(f.status === 404 && isFavicon(f.url)))
      .filter((f) => !(isApi(f.url) && expectedApiErrors.some((e) => e.url === f.url && e.status === f.status)))
      .map((f) => `console error: ${f.text} (${f.url})`);
    assert.deepEqual([...problems, ...unexplained], [], `the browser reported problems ${when}`);
  };

  function watch(p) {
    p.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    p.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const url = msg.location()?.url ?? '';
      const loadFailure = /status of (\d{3})/.exec(msg.text());
      if (loadFailure && url) loadFailures.push({ url, status: Number(loadFailure[1]), text: msg.text() });
      else problems.push(`console error: ${msg.text()} (${url || 'no location'})`);
    });
    p.on('requestfailed', (req) => {
      const why = req.failure()?.errorText ?? 'failed';
      if (navigating && why.includes('ERR_ABORTED')) return;  // a poll cut short by our reload
      problems.push(`request failed: ${req.method()} ${req.url()}: ${why}`);
    });
    p.on('response', (res) => {
      if (res.status() < 400) return;
      const url = res.url();
      const auth = res.request().headers().authorization ?? '';
      const expected = isApi(url) && (
        (res.status() === 401 && auth === '') ||
        (res.status() === 403 && auth === `Bearer ${CLIENT_KEY}`));
      if (expected) expectedApiErrors.push({ url, status: res.status() });
      else if (!(res.status() === 404 && isFavicon(url))) {
        problems.push(`HTTP ${res.status()} for ${res.request().method()} ${url} (authorization: ${auth ? 'set' : 'none'})`);
      }
    });
  }

  before(async () => {
    if (browserMissing) {
      throw new Error(`no browser at ${CHROMIUM}, and TANDEM_REQUIRE_BROWSER is set`);
    }
    // Paths are resolved only when the suite runs, so a skipped suite needs none of them.
    const { tandemBinary, llamaServer, model } = resolvePaths();

    tmpDir = makeTempDir('tandem-dashboard-');
    ports = await freePorts(2);
    const [llamaPort, gatewayPort] = ports;

    llama = startLlamaServer({ llamaServer, model, port: llamaPort });
    await llama.waitReady();  // the gateway probes its upstream from the start

    origin = `http://127.0.0.1:${gatewayPort}`;
    gateway = startGateway({
      tandemBinary,
      dir: tmpDir,
      config: gatewayConfig({ gatewayPort, llamaPort, model }),
      port: gatewayPort,
      env: {
        TANDEM_DASHBOARD_OPERATOR_KEY: OPERATOR_KEY,
        TANDEM_DASHBOARD_CLIENT_KEY: CLIENT_KEY,
        TANDEM_DASHBOARD_GAMER_KEY: GAMER_KEY,
      },
    });
    await gateway.waitReady();

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless=new'],
      timeout: READY_TIMEOUT_MS,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(UI_TIMEOUT_MS);
    // Runs before the page's own scripts (and outside its CSP): records every violation, so a
    // blocked inline style or script fails the test even if the console message changes.
    await context.addInitScript(() => {
      window.__cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        window.__cspViolations.push(`${e.violatedDirective}: ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`);
      });
    });
    page = await context.newPage();
    watch(page);
  }, { timeout: 3 * READY_TIMEOUT_MS });

  after(async () => {
    // Each step runs even when an earlier one throws: nothing may outlive the suite.
    const errors = [];
    const steps = [() => browser?.close(), () => gateway?.stop(), () => llama?.stop(),
      () => gateway?.assertStoppedCleanly()];
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    removeTempDir(tmpDir);
    tmpDir = undefined;
    for (const port of ports) {
      const free = await eventually(`port ${port} free`, async () => {
        assert.ok(await portIsFree(port), `port ${port} is still in use`);
        return true;
      }, { timeoutMs: 5_000 }).catch((err) => err);
      if (free !== true) errors.push(free);
    }
    if (errors.length) throw errors[0];
  });

  test('GET / serves the dashboard and its assets under a strict CSP', async () => {
    const index = await api('/', { key: null });
    assert.equal(index.status, 200, `GET / (no key needed for the page itself): ${index.text.slice(0, 300)}`);
    assert.match(index.res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(index.res.headers.get('content-security-policy') ?? '', /default-src 'self'/,
      'the page is served with Content-Security-Policy: default-src \'self\'');
    assert.match(index.text, /\/dashboard\/dashboard\.js/);
    assert.match(index.text, /\/dashboard\/dashboard\.css/);
    const js = await api('/dashboard/dashboard.js', { key: null });
    assert.equal(js.status, 200);
    assert.match(js.res.headers.get('content-type') ?? '', /javascript/);
    const css = await api('/dashboard/dashboard.css', { key: null });
    assert.equal(css.status, 200);
    assert.match(css.res.headers.get('content-type') ?? '', /^text\/css/);
  });

  test('without a key: the page loads cleanly and says the gateway wants a key (401)', async () => {
    const response = await page.goto(`${origin}/`, { waitUntil: 'load' });
    assert.equal(response.status(), 200);
    await eventually('status line shows the 401 message', async () => {
      const line = await text('status-line');
      assert.match(line, /401/, `status line: ${line}`);
      assert.match(line, /API key/i, `status line: ${line}`);
    });
    assert.equal(await page.getByTestId('api-key').inputValue(), '');
    assert.ok(expectedApiErrors.some((e) => e.status === 401), 'the page did call the API and got 401');
    assertNoProblems('loading the page without a key');
  });

  test('a client key that is not an operator\'s: the 403 message', async () => {
    await page.getByTestId('api-key').fill(CLIENT_KEY);
    await page.getByTestId('api-key').press('Enter');
    await eventually('status line shows the 403 message', async () => {
      const line = await text('status-line');
      assert.match(line, /403/, `status line: ${line}`);
    });
    assertNoProblems('with the client key');
  });

  test('with the operator key: live numbers that match the API', async () => {
    await page.getByTestId('api-key').fill(OPERATOR_KEY);
    await page.getByTestId('api-key').press('Enter');
    await eventually('status line says live', async () => {
      const line = await text('status-line');
      assert.doesNotMatch(line, /40[13]|error/i, `status line: ${line}`);
      assert.match(line, /live/i, `status line: ${line}`);
    });
    assert.equal(await page.evaluate(() => sessionStorage.getItem('tandem.dashboard.apiKey')), OPERATOR_KEY,
      'the key is kept in sessionStorage');
    const s = await status();
    // The allocator the build links (TANDEM_ALLOCATOR; sanitizer builds keep the system one).
    const allocator = process.env.TANDEM_EXPECTED_ALLOCATOR;
    if (allocator) {
      assert.match(s.gateway.allocator, new RegExp(`^${allocator}`), 'the status names the allocator');
    }
    await eventually('the page shows the status', async () => {
      assert.equal(await text('requests-total'), fmtInt(s.traffic.total.requests));
      assert.equal(await text('edge-model'), s.models.edge.name);
      assert.equal(await text('device-state'), s.device.state ?? DASH);
      const circuit = page.getByTestId(`circuit-${UPSTREAM}`);
      assert.match(await circuit.textContent(), new RegExp(s.circuits.find((c) => c.upstream === UPSTREAM).state));
    });
    assert.ok(await page.getByTestId('offline-banner').isHidden(), 'no offline banner while the cloud is up');
    assert.ok(await page.getByTestId('flagged-clients').isVisible());
    const first = await text('last-updated');
    assert.match(first, /\d\d:\d\d:\d\d/, `last-updated: ${first}`);
    await eventually('the page refreshes by itself', async () => {
      assert.notEqual(await text('last-updated'), first);
    });
    const body = await page.evaluate(() => document.body.innerText);
    for (const bad of ['undefined', 'NaN', '[object Object]']) {
      assert.ok(!body.includes(bad), `the page shows "${bad}"`);
    }
    assertNoProblems('with the operator key');
  });

  test('traffic: request counts, tier shares and latencies follow what the API says', async () => {
    const before = await status();
    const tiers = [];
    for (const [i, pattern] of ['edge', 'cloud', 'edge', 'cloud', 'edge'].entries()) {
      const { status: code, json, text: raw } = await chat(`Once upon a time, story ${i}`, { pattern });
      assert.equal(code, 200, `chat with X-Tandem-Pattern: ${pattern}: ${raw}`);
      assert.equal(json.tandem?.tier, pattern, `pattern ${pattern} answered by its tier: ${JSON.stringify(json.tandem)}`);
      tiers.push(json.tandem.tier);
    }
    let s;
    await eventually('the API counts the new requests', async () => {
      s = await status();
      assert.ok(s.traffic.total.requests >= before.traffic.total.requests + tiers.length,
        `total ${s.traffic.total.requests}, was ${before.traffic.total.requests}, sent ${tiers.length}`);
      assert.ok(s.latency_ms.edge.count > 0 && s.latency_ms.cloud.count > 0, JSON.stringify(s.latency_ms));
    });
    await eventually('the page shows the API\'s numbers', async () => {
      s = await status();  // the same numbers as the page's latest poll once traffic is quiet
      assert.equal(await text('requests-total'), fmtInt(s.traffic.total.requests), 'requests-total');
      for (const tier of ['edge', 'cloud', 'human']) {
        assert.equal(await text(`tier-share-${tier}`), fmtPct(s.traffic.recent.share[tier]), `tier-share-${tier}`);
      }
      assert.equal(await text('latency-edge-p50'), fmtMs(s.latency_ms.edge.p50), 'latency-edge-p50');
      assert.equal(await text('latency-cloud-p50'), fmtMs(s.latency_ms.cloud.p50), 'latency-cloud-p50');
      const saved = isNum(s.cost.saved_usd)
        ? `${fmtUsd(s.cost.saved_usd)}${isNum(s.cost.saved_share) ? ` (${fmtPct(s.cost.saved_share)})` : ''}`
        : DASH;
      assert.equal(await text('cost-saved'), saved, 'cost-saved');
    });
    assert.notEqual(await text('tier-share-edge'), DASH);
    assert.notEqual(await text('tier-share-cloud'), DASH);
    assertNoProblems('while traffic flowed');
  });

  test('plots: every history plot draws the traffic, a flagged client, and the window switch', async () => {
    // Edge generations of 40 tokens, one at a time: the decode-speed monitor counts those.
    for (let i = 0; i < 3; ++i) {
      const { status: code, text: raw } = await chat(`Once upon a time, long story ${i}`, { pattern: 'edge', maxTokens: 40 });
      assert.equal(code, 200, raw);
    }
    // The app's routed traffic stays mostly on the edge; the gamer's all goes to the cloud.
    for (let i = 0; i < 12; ++i) {
      const { status: code, text: raw } = await chat(`Once upon a time, plain ${i}`, { pattern: 'edge' });
      assert.equal(code, 200, raw);
    }
    for (let i = 0; i < 10; ++i) {
      const { status: code, text: raw } = await chat(`Once upon a time, gamed ${i}`, { pattern: 'cloud', key: GAMER_KEY });
      assert.equal(code, 200, raw);
    }
    await eventually('the gaming monitor flags the gamer', async () => {
      const s = await status();
      assert.ok(s.gaming.flagged.some((f) => f.client === 'gamer'), JSON.stringify(s.gaming));
    });

    await page.getByTestId('plot-window-3600').click();
    await eventually('every plot is drawn with data', async () => {
      assert.equal(await page.getByTestId('plots').getAttribute('data-window'), '3600');
      for (const id of PLOTS) {
        const canvas = page.getByTestId(`plot-${id}`).locator('canvas');
        assert.equal(await canvas.count(), 1, `plot-${id} has its canvas`);
        const box = await canvas.boundingBox();
        assert.ok(box && box.width > 200 && box.height > 100, `plot-${id} canvas: ${JSON.stringify(box)}`);
        const { points, values } = await plotCounts(id);
        assert.ok(points >= 360 && points <= 361, `plot-${id}: ${points} points over an hour`);
        assert.ok(values > 0, `plot-${id} shows some values`);
      }
    });
    // The gamer has its own line in the gaming plot's legend.
    const legend = await page.getByTestId('plot-gaming').locator('.u-legend').textContent();
    assert.match(legend, /gamer/, `gaming legend: ${legend}`);

    await page.getByTestId('plot-window-300').click();
    await eventually('the 5-minute window', async () => {
      assert.equal(await page.getByTestId('plots').getAttribute('data-window'), '300');
      const { points, values } = await plotCounts('requests');
      assert.ok(points >= 30 && points <= 31, `${points} points over 5 minutes`);
      assert.ok(values > 0, 'the recent traffic is in the 5-minute window');
    });
    assert.equal(await page.getByTestId('plot-window-300').getAttribute('aria-pressed'), 'true');
    await page.getByTestId('plot-window-21600').click();
    await eventually('the 6-hour window', async () => {
      assert.equal(await page.getByTestId('plots').getAttribute('data-window'), '21600');
      const { points } = await plotCounts('requests');
      assert.ok(points >= 360 && points <= 361, `${points} points over 6 hours (a minute each)`);
    });
    await page.getByTestId('plot-window-3600').click();
    await eventually('back to the hour', async () => {
      assert.equal(await page.getByTestId('plots').getAttribute('data-window'), '3600');
    });
    assert.deepEqual(await cspViolations(), [], 'no CSP violations');
    assertNoProblems('while drawing the plots');
    if (SCREENSHOT_DIR) {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'dashboard-desktop.png'), fullPage: true });
    }
  });

  test('review: a "lawsuit" query is listed, answered from the page, and the client gets the answer', async () => {
    const prompt = 'My landlord threatens a lawsuit over the deposit. <b>What</b> should I do?';
    const { status: code, json, text: raw } = await chat(prompt);
    assert.equal(code, 200, raw);
    assert.equal(json.choices?.[0]?.finish_reason, 'pending_review', raw);
    const ticketId = json.tandem?.review?.ticket;
    assert.ok(ticketId, `the client got a ticket: ${JSON.stringify(json.tandem)}`);

    const item = page.locator(`[data-testid="review-item"][data-ticket="${ticketId}"]`);
    await eventually('the ticket appears in the review queue', async () => {
      assert.equal(await item.count(), 1);
    });
    // Shown as text, never as markup: the <b> of the prompt stays literal.
    assert.ok((await item.textContent()).includes(prompt), 'the item shows the prompt as written');
    assert.equal(await item.locator('b').count(), 0, 'no markup from the prompt made it into the DOM');

    const answer = 'Keep every receipt, answer in writing, and ask a tenants\' association.';
    await item.getByTestId('review-answer-text').fill(answer);
    // A refresh in between must not clear what was typed: wait until one has happened (the time
    // it shows moves on once a whole poll, the review list included, has rendered after the
    // typing), rather than sleeping and hoping one did.
    const typedAt = await text('last-updated');
    await eventually('a refresh after the typing', async () => {
      assert.notEqual(await text('last-updated'), typedAt);
    });
    assert.equal(await item.getByTestId('review-answer-text').inputValue(), answer, 'the typed answer survives a refresh');
    await item.getByTestId('review-answer-button').click();

    await eventually('the page reports the answer', async () => {
      const result = await text('review-result');
      assert.ok(result.includes(ticketId) && /answered/i.test(result), `review-result: ${result}`);
    });
    await eventually('the ticket leaves the pending list', async () => {
      assert.equal(await item.count(), 0);
    });
    const ticket = await api(`/v1/tandem/reviews/${encodeURIComponent(ticketId)}`, { key: CLIENT_KEY });
    assert.equal(ticket.status, 200, ticket.text);
    assert.equal(ticket.json.status, 'answered', ticket.text);
    assert.equal(ticket.json.answer, answer, ticket.text);
    assert.equal(ticket.json.reviewer, 'operator', 'answered under the operator key\'s name');
    assert.equal(ticket.json.completion?.choices?.[0]?.message?.content, answer, 'the client gets the answer as a completion');
    assertNoProblems('while answering a review');
  });

  test('a 400 px wide screen still renders everything, and the key survives a reload', async () => {
    // A pending ticket with a long unbroken word: the review queue must fit the screen too.
    const longWord = 'x'.repeat(300);
    const pending = await chat(`Is a lawsuit about ${longWord} possible?`);
    assert.equal(pending.status, 200, pending.text);
    const ticketId = pending.json.tandem?.review?.ticket;
    assert.ok(ticketId, `the client got a ticket: ${pending.text}`);

    await page.setViewportSize({ width: 400, height: 800 });
    navigating = true;
    try {
      await page.reload({ waitUntil: 'load' });
    } finally {
      navigating = false;
    }
    assert.equal(await page.getByTestId('api-key').inputValue(), OPERATOR_KEY, 'the key comes back from sessionStorage');
    const s = await status();
    await eventually('the narrow page shows live numbers', async () => {
      assert.match(await text('status-line'), /live/i);
      assert.equal(await text('requests-total'), fmtInt(s.traffic.total.requests));
    });
    const item = page.locator(`[data-testid="review-item"][data-ticket="${ticketId}"]`);
    await eventually('the pending ticket is listed', async () => {
      assert.equal(await item.count(), 1);
    });
    await item.scrollIntoViewIfNeeded();
    await eventually('the plots are drawn at the narrow width', async () => {
      for (const id of PLOTS) {
        const { values } = await plotCounts(id);
        assert.ok(values > 0, `plot-${id} shows some values`);
        const box = await page.getByTestId(`plot-${id}`).locator('canvas').boundingBox();
        assert.ok(box && box.width > 200 && box.width <= 400, `plot-${id} canvas: ${JSON.stringify(box)}`);
      }
    });
    for (const id of ['tier-share-edge', 'tier-share-cloud', 'requests-total', 'latency-edge-p50',
      'cost-saved', 'edge-model', 'device-state', `circuit-${UPSTREAM}`, 'api-key', 'status-line',
      'review-item', 'review-answer-text', 'review-answer-button', 'plot-window-21600',
      ...PLOTS.map((p) => `plot-${p}`)]) {
      const box = await page.getByTestId(id).first().boundingBox();
      assert.ok(box && box.width > 0 && box.height > 0, `${id} is rendered`);
      assert.ok(box.x >= 0 && box.x + box.width <= 400 + 1, `${id} fits in 400 px: ${JSON.stringify(box)}`);
    }
    const [scrollWidth, innerWidth] = await page.evaluate(
      () => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(scrollWidth <= innerWidth, `no sideways scrolling: ${scrollWidth} > ${innerWidth}`);
    assert.deepEqual(await cspViolations(), [], 'no CSP violations');
    assertNoProblems('on a narrow screen');
    if (SCREENSHOT_DIR) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'dashboard-phone.png'), fullPage: true });
    }
  });
});
