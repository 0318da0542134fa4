// End-to-end: OpenAI's official Node client, unchanged, against `tandem serve`.
//
// The suite starts llama.cpp's llama-server as a real cloud upstream and `tandem serve` in
// front of it (edge: the tiny stories model), then talks to the gateway only through the
// `openai` package. If the gateway speaks OpenAI's wire format faithfully, every call here
// behaves as it would against api.openai.com: typed results, SSE streams, typed errors.
//
// Environment (tests/e2e/run.sh sets all three):
//   TANDEM_BINARY  the gateway (default: <repo>/build/tandem)
//   LLAMA_SERVER   llama.cpp's server (default: scripts/build-llama.sh's prefix + /bin/llama-server)
//   TANDEM_MODEL   the GGUF both tiers serve (default: <repo>/models/stories260K.gguf)

import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';

import {
  READY_TIMEOUT_MS, freePorts, makeTempDir, removeTempDir, resolvePaths, sleep,
  startGateway, startLlamaServer,
} from './harness.mjs';

// Greedy decoding of the stories model continues "Once upon a time" with this, on both tiers
// (same GGUF, same argmax), so one expectation checks the edge and the cloud alike.
const PROMPT = 'Once upon a time';
const EXPECTED_START = ', there was a little girl named Lily';

// Public names the temp config gives the two tiers' models.
const EDGE_MODEL = 'stories-edge';
const CLOUD_MODEL = 'cloud-stories';

// Client keys. The gateway reads them from its environment (key_env), as in production.
const API_KEY = 'tandem-e2e-key';
const EDGE_ONLY_KEY = 'tandem-e2e-edge-only-key';

const REQUEST_TIMEOUT_MS = 30_000;

const { tandemBinary: TANDEM_BINARY, llamaServer: LLAMA_SERVER, model: TANDEM_MODEL } = resolvePaths();

// ---------------------------------------------------------------------------------------------
// The gateway's config

function gatewayConfig({ gatewayPort, llamaPort }) {
  // JSON strings are valid YAML scalars: paths with odd characters need no escaping rules.
  const q = JSON.stringify;
  return `# Written by tests/e2e/openai_client.test.mjs
server:
  host: 127.0.0.1
  port: ${gatewayPort}
  shutdown_grace_ms: 1000
  api_keys:
    - name: test
      key_env: TANDEM_TEST_KEY
    - name: edge-only
      key_env: TANDEM_TEST_EDGE_ONLY_KEY
      models: [tandem, ${EDGE_MODEL}]
edge:
  model: ${q(TANDEM_MODEL)}
  name: ${EDGE_MODEL}
cloud:
  upstreams:
    - name: local-llama
      base_url: ${q(`http://127.0.0.1:${llamaPort}/v1`)}
      models: {${CLOUD_MODEL}: stories}
# The tests assert which tier answers "tandem". A decode speed that drops below the learned
# baseline (another process on the cores) would move work to the cloud by design: here it is
# only reported, so the verdicts do not depend on the machine's load.
operations:
  device: {when_throttled: none}
`;
}

// ---------------------------------------------------------------------------------------------
// Small assertion helpers

function assertUsage(usage, { completionTokens } = {}) {
  assert.ok(usage, 'the response has usage');
  assert.ok(usage.prompt_tokens > 0, `prompt_tokens > 0 (usage: ${JSON.stringify(usage)})`);
  assert.ok(usage.completion_tokens > 0, `completion_tokens > 0 (usage: ${JSON.stringify(usage)})`);
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens,
               `total_tokens = prompt_tokens + completion_tokens (usage: ${JSON.stringify(usage)})`);
  if (completionTokens !== undefined) {
    assert.equal(usage.completion_tokens, completionTokens,
                 `completion_tokens equals max_tokens when finish_reason is "length"`);
  }
}

function assertStartsWithStory(text, where) {
  assert.equal(typeof text, 'string', `${where}: text is a string`);
  assert.ok(text.startsWith(EXPECTED_START),
            `${where}: greedy continuation should start with ${JSON.stringify(EXPECTED_START)}, ` +
            `got ${JSON.stringify(text)}`);
}

function assertTier(response, body, tier) {
  // The body first: its "tandem" object says why a request went elsewhere (fallbacks, reasons).
  assert.ok(body.tandem, `the body has a top-level "tandem" object: ${JSON.stringify(body)}`);
  assert.equal(body.tandem.tier, tier,
               `tandem.tier is "${tier}" (tandem: ${JSON.stringify(body.tandem)})`);
  assert.equal(response.headers.get('x-tandem-tier'), tier, `header X-Tandem-Tier is "${tier}"`);
}

// Reads a whole chat stream: the concatenated text and every chunk, in order.
async function collectChat(stream) {
  const chunks = [];
  let text = '';
  for await (const chunk of stream) {
    chunks.push(chunk);
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  return { chunks, text };
}

async function collectCompletion(stream) {
  const chunks = [];
  let text = '';
  for await (const chunk of stream) {
    chunks.push(chunk);
    text += chunk.choices[0]?.text ?? '';
  }
  return { chunks, text };
}

function finishReasons(chunks) {
  return chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean);
}

// Runs `call` and checks it rejects with the client's typed error for `status`.
async function assertApiError(call, ErrorClass, status, check = () => {}) {
  await assert.rejects(call, (err) => {
    assert.ok(err instanceof ErrorClass,
              `expected ${ErrorClass.name}, got ${err?.constructor?.name}: ${err?.message}`);
    assert.equal(err.status, status, `HTTP status of ${ErrorClass.name}`);
    check(err);
    return true;
  });
}

// True once `server` answers /health, polling up to READY_TIMEOUT_MS; false at once if it has
// exited, or when it never answers.
async function answersHealth(server) {
  try {
    await server.waitReady();
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The suite

describe('OpenAI Node client against tandem serve', { timeout: 180_000 }, () => {
  let llama;
  let gateway;
  let baseURL;
  let client;
  let tmpDir;

  const chatRequest = (overrides = {}) => ({
    model: 'tandem',
    messages: [{ role: 'user', content: PROMPT }],
    temperature: 0,
    max_tokens: 24,
    ...overrides,
  });

  // No retries: a retried request would hide the very failures this suite looks for.
  const makeClient = (apiKey) =>
    new OpenAI({ apiKey, baseURL, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });

  before(async () => {
    tmpDir = makeTempDir('tandem-e2e-');
    const [llamaPort, gatewayPort] = await freePorts(2);

    llama = startLlamaServer({ llamaServer: LLAMA_SERVER, model: TANDEM_MODEL, port: llamaPort });
    // The gateway probes its upstreams from the start: have the cloud up first.
    await llama.waitReady();

    baseURL = `http://127.0.0.1:${gatewayPort}/v1`;
    gateway = startGateway({
      tandemBinary: TANDEM_BINARY,
      dir: tmpDir,
      config: gatewayConfig({ gatewayPort, llamaPort }),
      port: gatewayPort,
      env: { TANDEM_TEST_KEY: API_KEY, TANDEM_TEST_EDGE_ONLY_KEY: EDGE_ONLY_KEY },
    });
    await gateway.waitReady();
    client = makeClient(API_KEY);
  }, { timeout: 2 * READY_TIMEOUT_MS + 10_000 });

  after(async () => {
    await gateway?.stop();
    await llama?.stop();
    removeTempDir(tmpDir);
    tmpDir = undefined;
    gateway?.assertStoppedCleanly();
  });

  // A crash must fail the test that caused it, not every test after it: check the gateway
  // after each test and start a fresh one for the rest when it died. The diagnostic carries
  // the exit status and output into the report, where the client only says "Connection error".
  afterEach(async (t) => {
    // A gateway that answers slowly (one /health probe gives up after 1 s) is not a dead one:
    // poll as at start-up, for up to READY_TIMEOUT_MS, before calling it down.
    if (await answersHealth(gateway)) return;
    // The client may see the reset a moment before the exit status is in.
    await Promise.race([gateway.exited, sleep(2_000)]);
    const what = gateway.report();
    t.diagnostic(`gateway down after this test: ${what}`);
    await gateway.stop();
    gateway.start();
    await gateway.waitReady();
    assert.fail(`the gateway stopped answering during this test (restarted for the next ones): ${what}`);
  });

  test('GET /health: edge loaded, cloud upstream online', async () => {
    const res = await fetch(gateway.healthUrl);
    const health = await res.json();
    const why = JSON.stringify(health);
    assert.equal(res.status, 200, why);
    assert.equal(health.status, 'ok', why);
    assert.equal(health.edge?.loaded, true, `the edge model is loaded: ${why}`);
    const [upstream] = health.cloud?.upstreams ?? [];
    assert.equal(upstream?.name, 'local-llama', `the configured upstream is listed: ${why}`);
    // The gateway probes llama-server's /v1/models; an upstream marked offline here is
    // skipped, and the cloud tests below then get edge answers.
    assert.equal(upstream.online, true, `llama-server is online: ${why}`);
    assert.equal(upstream.circuit, 'closed', `no failures talking to llama-server: ${why}`);
    // This gateway has API keys: its public /health does not repeat upstream errors.
    assert.ok(!('last_error' in upstream), `no last_error on the public /health: ${why}`);
  });

  test('models.list() lists the routed model, the edge model and the cloud model', async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    for (const id of ['tandem', EDGE_MODEL, CLOUD_MODEL]) {
      assert.ok(ids.includes(id), `models.list() should include "${id}", got ${JSON.stringify(ids)}`);
    }
  });

  test('chat, non-streaming, model "tandem": greedy story from the edge', async () => {
    const { data, response } = await client.chat.completions.create(chatRequest()).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices.length, 1);
    const [choice] = data.choices;
    assert.equal(choice.message.role, 'assistant');
    assertStartsWithStory(choice.message.content, 'chat content');
    assert.equal(choice.finish_reason, 'length', 'max_tokens reached: finish_reason "length"');
    assertUsage(data.usage, { completionTokens: 24 });
    assertTier(response, data, 'edge');
  });

  test('chat, streaming with include_usage, model "tandem": same text, usage chunk, tandem last', async () => {
    const expected = await client.chat.completions.create(chatRequest());
    const { data: stream, response } = await client.chat.completions
      .create(chatRequest({ stream: true, stream_options: { include_usage: true } }))
      .withResponse();
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(response.headers.get('x-tandem-tier'), 'edge', 'header X-Tandem-Tier is "edge"');

    const { chunks, text } = await collectChat(stream);
    assert.ok(chunks.length > 2, `several chunks arrived (${chunks.length})`);
    for (const chunk of chunks) assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(text, expected.choices[0].message.content,
                 'the streamed deltas concatenate to the non-streaming content');
    assert.deepEqual(finishReasons(chunks), ['length'], 'exactly one finish_reason, "length"');

    const usageChunks = chunks.filter((c) => c.usage);
    assert.equal(usageChunks.length, 1, 'exactly one chunk carries usage');
    assert.deepEqual(usageChunks[0].choices, [], 'the usage chunk has no choices (OpenAI shape)');
    assertUsage(usageChunks[0].usage, { completionTokens: 24 });

    const last = chunks.at(-1);
    assert.ok(last.tandem, `the last chunk carries "tandem": ${JSON.stringify(last)}`);
    assert.equal(last.tandem.tier, 'edge');
  });

  test('chat with the edge model by name', async () => {
    const { data, response } = await client.chat.completions
      .create(chatRequest({ model: EDGE_MODEL })).withResponse();
    assertStartsWithStory(data.choices[0].message.content, 'edge model content');
    assertTier(response, data, 'edge');
  });

  test('speculative pattern: a revision event does not trip the client, and replaces the text', async () => {
    // The edge streams at once; llama-server (same weights, its own chat template) verifies.
    const stream = await client.chat.completions.create(chatRequest({ stream: true }),
                                                        { headers: { 'X-Tandem-Pattern': 'speculative' } });
    const { chunks } = await collectChat(stream);
    const last = chunks.at(-1);
    assert.ok(last.tandem, `the last chunk carries "tandem": ${JSON.stringify(last)}`);
    assert.equal(last.tandem.pattern, 'speculative');
    const status = last.tandem.verification?.status;
    assert.ok(['agreed', 'disagreed'].includes(status), `the cloud gave a verdict: ${status}`);
    const markers = chunks.filter((c) => c.tandem?.revision && !c.tandem.tier);
    if (status === 'agreed') {
      assert.equal(markers.length, 0, 'no revision when the cloud agrees');
      assert.equal(last.tandem.tier, 'edge');
      return;
    }
    assert.equal(markers.length, 1, 'exactly one revision event reached the client as a chunk');
    assert.deepEqual(markers[0].choices, [], 'the revision chunk has no choices, so nothing is appended');
    assert.equal(markers[0].tandem.revision.to_tier, 'cloud');
    const after = chunks.slice(chunks.indexOf(markers[0]) + 1)
      .map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.ok(after.length > 0, 'the cloud\'s answer follows the revision');
    assert.equal(last.tandem.tier, 'cloud');
  });

  describe('cloud model through llama-server', () => {
    test('non-streaming: same greedy story, tier "cloud"', async () => {
      const { data, response } = await client.chat.completions
        .create(chatRequest({ model: CLOUD_MODEL })).withResponse();
      assertStartsWithStory(data.choices[0].message.content, 'cloud content');
      assert.equal(data.choices[0].finish_reason, 'length');
      assertUsage(data.usage, { completionTokens: 24 });
      assertTier(response, data, 'cloud');
    });

    test('streaming with include_usage: same text, usage chunk, tandem last', async () => {
      const expected = await client.chat.completions.create(chatRequest({ model: CLOUD_MODEL }));
      const { data: stream, response } = await client.chat.completions
        .create(chatRequest({ model: CLOUD_MODEL, stream: true, stream_options: { include_usage: true } }))
        .withResponse();
      assert.equal(response.headers.get('x-tandem-tier'), 'cloud', 'header X-Tandem-Tier is "cloud"');
      const { chunks, text } = await collectChat(stream);
      assertStartsWithStory(text, 'streamed cloud text');
      assert.equal(text, expected.choices[0].message.content,
                   'the streamed deltas concatenate to the non-streaming content');
      assert.deepEqual(finishReasons(chunks), ['length']);
      const usageChunks = chunks.filter((c) => c.usage);
      assert.ok(usageChunks.length >= 1, 'a usage chunk arrives');
      assertUsage(usageChunks.at(-1).usage, { completionTokens: 24 });
      const last = chunks.at(-1);
      assert.ok(last.tandem, `the last chunk carries "tandem": ${JSON.stringify(last)}`);
      assert.equal(last.tandem.tier, 'cloud');
    });

    test('logprobs with top_logprobs: 2', async () => {
      const { data, response } = await client.chat.completions
        .create(chatRequest({ model: CLOUD_MODEL, logprobs: true, top_logprobs: 2 })).withResponse();
      assertTier(response, data, 'cloud');
      assertStartsWithStory(data.choices[0].message.content, 'cloud content with logprobs');
      const content = data.choices[0].logprobs?.content;
      assert.ok(Array.isArray(content) && content.length > 0,
                `choices[0].logprobs.content is a non-empty list: ${JSON.stringify(data.choices[0].logprobs)}`);
      for (const entry of content) {
        assert.equal(typeof entry.token, 'string', `token is a string: ${JSON.stringify(entry)}`);
        assert.equal(typeof entry.logprob, 'number', `logprob is a number: ${JSON.stringify(entry)}`);
        assert.ok(entry.logprob <= 0, `logprob <= 0: ${JSON.stringify(entry)}`);
        assert.ok(Array.isArray(entry.top_logprobs) && entry.top_logprobs.length === 2,
                  `two top_logprobs: ${JSON.stringify(entry)}`);
        for (const alt of entry.top_logprobs) {
          assert.equal(typeof alt.token, 'string');
          assert.equal(typeof alt.logprob, 'number');
        }
      }
      assert.equal(content.map((e) => e.token).join(''), data.choices[0].message.content,
                   'the logprob tokens spell the content');
    });
  });

  describe('legacy completions, model "tandem"', () => {
    const completionRequest = (overrides = {}) => ({
      model: 'tandem', prompt: PROMPT, temperature: 0, max_tokens: 24, ...overrides,
    });

    test('non-streaming', async () => {
      const { data, response } = await client.completions.create(completionRequest()).withResponse();
      assert.equal(data.object, 'text_completion');
      assertStartsWithStory(data.choices[0].text, 'completion text');
      assert.equal(data.choices[0].finish_reason, 'length');
      assertUsage(data.usage, { completionTokens: 24 });
      assertTier(response, data, 'edge');
    });

    test('streaming', async () => {
      const expected = await client.completions.create(completionRequest());
      const stream = await client.completions.create(
        completionRequest({ stream: true, stream_options: { include_usage: true } }));
      const { chunks, text } = await collectCompletion(stream);
      assert.equal(text, expected.choices[0].text,
                   'the streamed pieces concatenate to the non-streaming text');
      assert.deepEqual(finishReasons(chunks), ['length']);
      assert.ok(chunks.some((c) => c.usage), 'a usage chunk arrives with include_usage');
      assert.ok(chunks.at(-1).tandem, `the last chunk carries "tandem": ${JSON.stringify(chunks.at(-1))}`);
      assert.equal(chunks.at(-1).tandem.tier, 'edge');
    });
  });

  describe('errors surface as the client\'s typed errors', () => {
    test('unknown model: NotFoundError (404)', async () => {
      await assertApiError(client.chat.completions.create(chatRequest({ model: 'no-such-model' })),
        OpenAI.NotFoundError, 404, (err) => {
          assert.equal(err.code, 'model_not_found');
          assert.match(err.message, /no-such-model/);
        });
    });

    test('temperature 5: BadRequestError (400) naming the parameter', async () => {
      await assertApiError(client.chat.completions.create(chatRequest({ temperature: 5 })),
        OpenAI.BadRequestError, 400, (err) => assert.equal(err.param, 'temperature'));
    });

    test('wrong API key: AuthenticationError (401), for completions and models', async () => {
      const intruder = makeClient('not-the-key');
      await assertApiError(intruder.chat.completions.create(chatRequest()),
        OpenAI.AuthenticationError, 401, (err) => assert.equal(err.code, 'invalid_api_key'));
      await assertApiError(intruder.models.list(), OpenAI.AuthenticationError, 401);
    });

    test('key limited to other models: PermissionDeniedError (403)', async () => {
      const edgeOnly = makeClient(EDGE_ONLY_KEY);
      const allowed = await edgeOnly.chat.completions.create(chatRequest());
      assertStartsWithStory(allowed.choices[0].message.content, 'allowed model');
      await assertApiError(edgeOnly.chat.completions.create(chatRequest({ model: CLOUD_MODEL })),
        OpenAI.PermissionDeniedError, 403);
    });
  });

  describe('aborted streams leave the server healthy', () => {
    // Long enough that the server is usually still generating when the client walks away.
    // Chunks already buffered on the client may still be delivered after abort(), so the
    // tests check what matters to the server: it frees the work and keeps answering.
    const longStream = (model) => chatRequest({ model, max_tokens: 400, stream: true });

    // Reads `before` chunks, calls `abort`, and drains what the client still yields. The loop
    // ending at all (rather than hanging until the timeout) is part of the check.
    async function readThenAbort(stream, before, abort) {
      let received = 0;
      let finished = false;
      for await (const chunk of stream) {
        received += 1;
        finished ||= Boolean(chunk.choices[0]?.finish_reason);
        if (received === before) abort();
      }
      return { received, finished };
    }

    async function assertStillServes(model) {
      const data = await client.chat.completions.create(chatRequest({ model }));
      assertStartsWithStory(data.choices[0].message.content, `request after the abort (${model})`);
    }

    // A cancelled request must release its edge sequence: /health counts the active ones. Freed
    // within a step of the cancel; the 30 s deadline is reached only by a sequence never freed.
    async function assertEdgeIdle(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let health;
      while (Date.now() < deadline) {
        health = await (await fetch(gateway.healthUrl)).json();
        if (health.edge?.active === 0 && health.edge?.queued === 0) return;
        await sleep(50);
      }
      assert.fail(`the edge still has work ${timeoutMs} ms after the abort: ${JSON.stringify(health)}`);
    }

    test('edge: stream.controller.abort() mid-way', async (t) => {
      const stream = await client.chat.completions.create(longStream('tandem'));
      const { received, finished } = await readThenAbort(stream, 3, () => stream.controller.abort());
      t.diagnostic(`chunks delivered: ${received}; finish chunk seen: ${finished}`);
      assert.ok(stream.controller.signal.aborted);
      await assertEdgeIdle();
      await assertStillServes('tandem');
    });

    test('cloud: AbortController signal mid-way', async (t) => {
      const abort = new AbortController();
      const { data: stream, response } = await client.chat.completions
        .create(longStream(CLOUD_MODEL), { signal: abort.signal }).withResponse();
      assert.equal(response.headers.get('x-tandem-tier'), 'cloud', 'the stream comes from the cloud');
      const { received, finished } = await readThenAbort(stream, 3, () => abort.abort());
      t.diagnostic(`chunks delivered: ${received}; finish chunk seen: ${finished}`);
      await assertStillServes(CLOUD_MODEL);
    });

    test('several aborted edge streams in a row, then a full answer', async () => {
      for (let i = 0; i < 5; i += 1) {
        const stream = await client.chat.completions.create(longStream('tandem'));
        // Leaving the loop after the first chunk makes the client abort the request.
        for await (const _chunk of stream) break;
      }
      await assertEdgeIdle();
      await assertStillServes('tandem');
    });
  });
});
