// End-to-end: the chat playground (`GET /chat`) in a headless Chromium against `tandem serve`,
// with llama.cpp's llama-server as the cloud tier.
//
// The cloud is given a chat template that puts a sentence before the prompt, so its greedy
// story differs from the edge's: under the speculative pattern the cloud then disagrees with
// the edge and the gateway revises the streamed answer, which the page must show. Checked: the
// page and its assets under the CSP, the key prompt without a key, a routed chat with its tier,
// reasons, cost, privacy line and per-token confidence chart, a private prompt pinned to the
// edge with the finding's masked hint, a revision, an error, a phone-width layout, and no
// console error anywhere. TANDEM_SCREENSHOT_DIR (optional) receives chat-desktop.png and
// chat-phone.png, the README's screenshots.
//
// Environment (tests/e2e/run.sh sets the first three): TANDEM_BINARY, LLAMA_SERVER,
// TANDEM_MODEL (harness.mjs); TANDEM_CHROMIUM, TANDEM_REQUIRE_BROWSER as in dashboard.test.mjs.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { chromium } from 'playwright-core';

import {
  READY_TIMEOUT_MS, freePorts, makeTempDir, removeTempDir, resolvePaths, startGateway,
  startLlamaServer,
} from './harness.mjs';

const CHROMIUM = process.env.TANDEM_CHROMIUM || '/usr/bin/chromium';
const REQUIRE_BROWSER = Boolean(process.env.TANDEM_REQUIRE_BROWSER);
const SCREENSHOT_DIR = process.env.TANDEM_SCREENSHOT_DIR;
const CLIENT_KEY = 'tandem-playground-client-key';
const UI_TIMEOUT_MS = 30_000;

const browserMissing = !fs.existsSync(CHROMIUM);
const skipReason = browserMissing && !REQUIRE_BROWSER
  ? `no browser at ${CHROMIUM} (install Debian's chromium, or set TANDEM_CHROMIUM)` : false;
if (skipReason) console.error(`chat playground e2e skipped: ${skipReason}`);

function gatewayConfig({ gatewayPort, llamaPort, model }) {
  const q = JSON.stringify;
  return `# Written by tests/e2e/chat_playground.test.mjs
server:
  host: 127.0.0.1
  port: ${gatewayPort}
  shutdown_grace_ms: 1000
  api_keys:
    - name: app
      key_env: TANDEM_PLAYGROUND_KEY
edge:
  model: ${q(model)}
  name: stories-edge
  threads: 1
cloud:
  upstreams:
    - name: local-llama
      base_url: ${q(`http://127.0.0.1:${llamaPort}/v1`)}
      models: {cloud-stories: stories}
      prices: {input_per_million: 0.15, output_per_million: 0.60}
routing:
  consistency:
    enabled: false
operations:
  device: {when_throttled: none}
`;
}

describe('chat playground in a headless browser', { skip: skipReason, timeout: 240_000 }, () => {
  let llama;
  let gateway;
  let origin;
  let tmpDir;
  let browser;
  let page;
  const problems = [];
  // Failed loads the test causes on purpose: /v1/models without a key, an over-limit request.
  const expected = [];

  function watch(p) {
    p.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    p.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const failed = /status of (\d{3})/.exec(msg.text());
      if (failed && expected.some((e) => Number(failed[1]) === e)) return;
      problems.push(`console error: ${msg.text()}`);
    });
  }

  const send = async (prompt, { pattern = '', maxTokens = '24' } = {}) => {
    await page.getByTestId('pattern').selectOption(pattern);
    await page.getByTestId('max-tokens').fill(maxTokens);
    await page.getByTestId('prompt').fill(prompt);
    const before = await page.getByTestId('answer').count();
    await page.getByTestId('send').click();
    const answer = page.getByTestId('answer').nth(before);
    // Done when the decision is drawn (its cost line) or an error is shown.
    await answer.locator('[data-testid=cost], [data-testid=error]').first().waitFor();
    return answer;
  };

  before(async () => {
    if (browserMissing) throw new Error(`no browser at ${CHROMIUM}, and TANDEM_REQUIRE_BROWSER is set`);
    const { tandemBinary, llamaServer, model } = resolvePaths();
    tmpDir = makeTempDir('tandem-playground-');
    const [llamaPort, gatewayPort] = await freePorts(2);
    llama = startLlamaServer({
      llamaServer, model, port: llamaPort,
      chatTemplate: '{% for message in messages %}Tom had a red ball. {{ message.content }}{% endfor %}',
    });
    await llama.waitReady();
    origin = `http://127.0.0.1:${gatewayPort}`;
    gateway = startGateway({
      tandemBinary, dir: tmpDir, config: gatewayConfig({ gatewayPort, llamaPort, model }),
      port: gatewayPort, env: { TANDEM_PLAYGROUND_KEY: CLIENT_KEY },
    });
    await gateway.waitReady();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(UI_TIMEOUT_MS);
    page = await context.newPage();
    watch(page);
  }, { timeout: 3 * READY_TIMEOUT_MS });

  after(async () => {
    const errors = [];
    for (const step of [() => browser?.close(), () => gateway?.stop(), () => llama?.stop(),
      () => gateway?.assertStoppedCleanly()]) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    removeTempDir(tmpDir);
    if (errors.length) throw errors[0];
  });

  test('GET /chat serves the page and its assets, without a key, under the CSP', async () => {
    for (const [pathname, type] of [['/chat', /^text\/html/], ['/chat/chat.js', /javascript/],
      ['/chat/chat.css', /^text\/css/]]) {
      const res = await fetch(origin + pathname);
      assert.equal(res.status, 200, pathname);
      assert.match(res.headers.get('content-type') ?? '', type, pathname);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/, pathname);
    }
  });

  test('without a key: the page asks for one', async () => {
    expected.push(401);
    await page.goto(`${origin}/chat`);
    await page.getByTestId('status').filter({ hasText: /API key/ }).waitFor();
  });

  test('with a key: the models are listed and a routed chat shows its tier, reasons, cost and confidence', async () => {
    await page.getByTestId('api-key').fill(CLIENT_KEY);
    await page.getByTestId('api-key').press('Enter');
    await page.getByTestId('status').filter({ hasText: 'Ready' }).waitFor();
    const models = await page.getByTestId('model').locator('option').allTextContents();
    assert.ok(models.some((m) => m.startsWith('tandem')), models.join(', '));
    assert.ok(models.some((m) => m.startsWith('cloud-stories')), models.join(', '));
    const answer = await send('Once upon a time');
    assert.ok((await answer.getByTestId('answer-text').textContent()).length > 0);
    const tier = await answer.getByTestId('tier').textContent();
    assert.match(tier, /^(edge|cloud)/);
    assert.ok(await answer.getByTestId('reasons').locator('li').count() > 0);
    assert.match(await answer.getByTestId('cost').textContent(), /edge \$[\d.]+ · cloud \$[\d.]+/);
    assert.equal(await answer.getByTestId('privacy').textContent(), 'nothing found');
    await answer.getByTestId('confidence-chart').waitFor();
    assert.match(await answer.getByTestId('confidence-note').textContent(), /\d+ tokens · mean 0\.\d\d/);
  });

  test('a private prompt stays on the edge and shows the finding as a masked hint', async () => {
    const answer = await send('My card is 4111 1111 1111 1111. Once upon a time');
    assert.match(await answer.getByTestId('tier').textContent(), /^edge/);
    const privacy = await answer.getByTestId('privacy').textContent();
    assert.match(privacy, /payment_card \*\*\*\*1111/);
    assert.ok(!privacy.includes('4111 1111'), 'the value itself is never shown');
    assert.equal(await answer.getByTestId('left-device').textContent(), 'stayed on the device');
    assert.match(await answer.getByTestId('reasons').textContent(), /payment_card/);
  });

  test('a revision: the speculative edge answer is withdrawn and the cloud\'s replaces it', async () => {
    await page.getByTestId('model').selectOption('tandem');
    await page.getByTestId('new-chat').click();
    const answer = await send('Once upon a time', { pattern: 'speculative', maxTokens: '16' });
    // A failure says what the page showed instead (the events line tells whether the cloud
    // verified, agreed or timed out).
    await answer.getByTestId('withdrawn').waitFor().catch(async (err) => {
      const shown = await answer.innerText();
      throw new Error(`no withdrawn edge answer; the answer shows: ${shown}`, { cause: err });
    });
    assert.match(await answer.getByTestId('events').textContent(), /revised: edge → cloud/);
    assert.match(await answer.getByTestId('tier').textContent(), /^cloud/);
    assert.ok((await answer.getByTestId('answer-text').textContent()).length > 0);
  });

  test('an error is shown in the conversation', async () => {
    expected.push(400);
    const answer = await send('Once upon a time', { maxTokens: '100000' });
    assert.match(await answer.getByTestId('error').textContent(), /max_tokens/);
  });

  test('phone width: one column, nothing wider than the screen; screenshots', async () => {
    if (SCREENSHOT_DIR) {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'chat-desktop.png'), fullPage: true });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than a phone screen`);
    if (SCREENSHOT_DIR) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'chat-phone.png'), fullPage: true });
    }
    assert.deepEqual(problems, [], 'the browser reported problems');
  });
});
