// End-to-end: the Responses API (POST /v1/responses) through the clients that speak it —
// OpenAI's Node client (`client.responses.create`, `.stream`, `.parse`) and the Vercel AI SDK's
// default `openai()` provider, which uses Responses unless told otherwise.
//
// The first suite runs the gateway edge-only on the shipped stories260K model, so texts are story fragments;
// what is checked is the protocol: the Response object and its output items, the event
// sequence of a stream, function calls whose arguments match the tools' schemas (the edge's
// generic tool format is grammar-constrained), structured output, previous_response_id with
// the conversation kept in the routing database, GET and DELETE of a stored response, `store:
// false`, and errors in the Responses error shape.
//
// The second puts a cloud upstream that speaks the Responses API (`api: responses`:
// tests/support/fault_upstream) behind a cloud model: the client's request goes to it as sent,
// a built-in web_search tool included, and its output items, events and usage come back under
// Tandem's response id, non-streaming and streaming, through `previous_response_id` too.
//
// Environment (tests/e2e/run.sh sets it): TANDEM_BINARY, TANDEM_MODEL, FAULT_UPSTREAM
// (harness.mjs).

import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool } from 'ai';

import {
  READY_TIMEOUT_MS, freePorts, makeTempDir, removeTempDir, resolveEdgePaths, resolveFaultUpstream,
  restartIfDown, startFaultUpstream, startGateway,
} from './harness.mjs';

const API_KEY = 'tandem-e2e-responses-key';
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_TOKENS = 160;  // the generic tool format's envelope and a call fit well within this

const { tandemBinary: TANDEM_BINARY, model: TANDEM_MODEL } = resolveEdgePaths();

const WeatherArgs = z.object({
  city: z.string().max(12),
  unit: z.enum(['celsius', 'fahrenheit']),
}).strict();
const Cat = z.object({ name: z.string().max(12), age: z.number().int() }).strict();

// A Responses function tool (flat: name and parameters at the top, unlike chat's).
const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 12 },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
  strict: true,
};

function gatewayConfig({ port }) {
  const q = JSON.stringify;  // JSON strings are valid YAML scalars
  return `# Written by tests/e2e/responses_api.test.mjs: edge only, no cloud
server:
  host: 127.0.0.1
  port: ${port}
  shutdown_grace_ms: 1000
  api_keys:
    - name: responses
      key_env: TANDEM_TEST_KEY
edge:
  model: ${q(TANDEM_MODEL)}
  threads: 1
operations:
  device: {when_throttled: none}
`;
}

function parseArgs(text, where) {
  try {
    return JSON.parse(text);
  } catch (err) {
    assert.fail(`${where}: not JSON (${err.message}): ${JSON.stringify(text)}`);
  }
}

describe('the Responses API against tandem serve (edge only)', { timeout: 240_000 }, () => {
  let gateway;
  let baseURL;
  let tmpDir;

  before(async () => {
    tmpDir = makeTempDir('tandem-e2e-responses-');
    const [port] = await freePorts(1);
    baseURL = `http://127.0.0.1:${port}/v1`;
    gateway = startGateway({
      tandemBinary: TANDEM_BINARY, dir: tmpDir, config: gatewayConfig({ port }), port,
      env: { TANDEM_TEST_KEY: API_KEY },
    });
    await gateway.waitReady();
  }, { timeout: READY_TIMEOUT_MS + 10_000 });

  after(async () => {
    await gateway?.stop();
    removeTempDir(tmpDir);
    tmpDir = undefined;
    gateway?.assertStoppedCleanly();
  });

  afterEach(async (t) => restartIfDown(gateway, t));

  const client = () => new OpenAI({ apiKey: API_KEY, baseURL, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });

  describe('OpenAI Node client (openai)', () => {
    test('responses.create: a Response with one message, output_text, usage and the decision', async () => {
      const response = await client().responses.create({
        model: 'tandem', input: 'Once upon a time', max_output_tokens: 16, temperature: 0,
      });
      assert.match(response.id, /^resp_/);
      assert.equal(response.object, 'response');
      assert.ok(['completed', 'incomplete'].includes(response.status), response.status);
      assert.equal(response.output.length, 1);
      const [message] = response.output;
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.content[0].type, 'output_text');
      assert.ok(response.output_text.length > 0, 'the SDK adds output_text up');
      assert.equal(response.output_text, message.content[0].text);
      assert.ok(response.usage.input_tokens > 0 && response.usage.output_tokens > 0);
      assert.equal(response.usage.total_tokens,
                   response.usage.input_tokens + response.usage.output_tokens);
      assert.equal(response.tandem.tier, 'edge');
      if (response.status === 'incomplete') {
        assert.equal(response.incomplete_details.reason, 'max_output_tokens');
      }
    });

    test('instructions and message items with content parts are accepted', async () => {
      const response = await client().responses.create({
        model: 'tandem',
        instructions: 'Tell a short story.',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'A cat' }] },
          { role: 'assistant', content: [{ type: 'output_text', text: 'sat on a mat.' }] },
          { type: 'message', role: 'user', content: 'Then what?' },
        ],
        max_output_tokens: 12,
      });
      assert.equal(response.instructions, 'Tell a short story.');
      assert.ok(response.output_text.length > 0);
    });

    test('stream: the event sequence, deltas that add up, and the final response', async () => {
      const stream = await client().responses.create({
        model: 'tandem', input: 'Once upon a time', max_output_tokens: 16, stream: true,
      });
      const types = [];
      let text = '';
      let last;
      let sequence = -1;
      for await (const event of stream) {
        types.push(event.type);
        assert.equal(event.sequence_number, sequence + 1, 'sequence numbers count up by one');
        sequence = event.sequence_number;
        if (event.type === 'response.output_text.delta') text += event.delta;
        last = event;
      }
      assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress',
                                           'response.output_item.added', 'response.content_part.added']);
      assert.ok(types.includes('response.output_text.delta'));
      const tail = types.slice(-4);
      assert.deepEqual(tail.slice(0, 3), ['response.output_text.done', 'response.content_part.done',
                                          'response.output_item.done']);
      assert.ok(['response.completed', 'response.incomplete'].includes(tail[3]), tail[3]);
      assert.equal(last.response.output[0].content[0].text, text);
      assert.ok(last.response.usage.output_tokens > 0);
    });

    test('responses.stream helper: finalResponse() has the streamed text', async () => {
      const stream = client().responses.stream({
        model: 'tandem', input: 'Once upon a time', max_output_tokens: 12,
      });
      let deltas = '';
      stream.on('response.output_text.delta', (event) => { deltas += event.delta; });
      const response = await stream.finalResponse();
      assert.equal(response.output_text, deltas);
    });

    test('function tools, tool_choice "required": a function_call item of the schema', async () => {
      const response = await client().responses.create({
        model: 'tandem', input: 'What is the weather in Paris?', tools: [WEATHER_TOOL],
        tool_choice: 'required', max_output_tokens: MAX_TOKENS, temperature: 0,
      });
      const calls = response.output.filter((item) => item.type === 'function_call');
      assert.equal(calls.length, 1, JSON.stringify(response.output));
      const [call] = calls;
      assert.equal(call.name, 'get_weather');
      assert.match(call.call_id, /^call_/);
      assert.match(call.id, /^fc_/);
      WeatherArgs.parse(parseArgs(call.arguments, 'arguments'));
      assert.deepEqual(response.tools.map((t) => t.name), ['get_weather']);
    });

    test('function tools, streaming: argument deltas add up to the call in the final response', async () => {
      const stream = await client().responses.create({
        model: 'tandem', input: 'What is the weather in Paris?', tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', name: 'get_weather' }, max_output_tokens: MAX_TOKENS,
        stream: true,
      });
      let args = '';
      let added;
      let done;
      let final;
      for await (const event of stream) {
        if (event.type === 'response.output_item.added' && event.item.type === 'function_call') {
          added = event.item;
        }
        if (event.type === 'response.function_call_arguments.delta') args += event.delta;
        if (event.type === 'response.function_call_arguments.done') done = event;
        if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
      }
      assert.equal(added?.name, 'get_weather');
      assert.equal(done.arguments, args);
      const call = final.output.find((item) => item.type === 'function_call');
      assert.equal(call.arguments, args);
      assert.equal(call.id, added.id);
      WeatherArgs.parse(parseArgs(args, 'streamed arguments'));
    });

    test('a tool round trip: function_call and function_call_output items in the input', async () => {
      const first = await client().responses.create({
        model: 'tandem', input: 'What is the weather in Paris?', tools: [WEATHER_TOOL],
        tool_choice: 'required', max_output_tokens: MAX_TOKENS,
      });
      const call = first.output.find((item) => item.type === 'function_call');
      const second = await client().responses.create({
        model: 'tandem', tools: [WEATHER_TOOL], tool_choice: 'none', max_output_tokens: 16,
        input: [
          { role: 'user', content: 'What is the weather in Paris?' },
          call,
          { type: 'function_call_output', call_id: call.call_id, output: '{"celsius": 21}' },
        ],
      });
      assert.equal(second.output[0].type, 'message');
      assert.ok(second.output_text.length > 0);
    });

    test('text.format json_schema (responses.parse with zodTextFormat): output_parsed', async () => {
      const response = await client().responses.parse({
        model: 'tandem', input: 'Describe a cat', max_output_tokens: MAX_TOKENS, temperature: 0,
        text: { format: zodTextFormat(Cat, 'cat') },
      });
      Cat.parse(response.output_parsed);
      assert.equal(response.text.format.type, 'json_schema');
    });

    test('previous_response_id continues the stored conversation; GET and DELETE it', async () => {
      const first = await client().responses.create({
        model: 'tandem', input: 'Once upon a time', max_output_tokens: 8,
      });
      const second = await client().responses.create({
        model: 'tandem', input: 'And then', max_output_tokens: 8, previous_response_id: first.id,
      });
      assert.equal(second.previous_response_id, first.id);
      // The first turn and its answer went in again: more input tokens than "And then" alone.
      assert.ok(second.usage.input_tokens > first.usage.input_tokens,
                `${second.usage.input_tokens} > ${first.usage.input_tokens}`);
      const fetched = await client().responses.retrieve(first.id);
      assert.equal(fetched.id, first.id);
      assert.equal(fetched.output_text, first.output_text);
      const deleted = await client().responses.delete(first.id);
      assert.equal(deleted?.deleted ?? true, true);
      await assert.rejects(client().responses.retrieve(first.id), (err) => err.status === 404);
      await assert.rejects(
        client().responses.create({ model: 'tandem', input: 'x', previous_response_id: first.id }),
        (err) => err.status === 404 && err.code === 'response_not_found' &&
                 err.param === 'previous_response_id');
    });

    test('store: false keeps nothing', async () => {
      const response = await client().responses.create({
        model: 'tandem', input: 'Once upon a time', max_output_tokens: 4, store: false,
      });
      assert.equal(response.store, false);
      await assert.rejects(client().responses.retrieve(response.id), (err) => err.status === 404);
    });

    test('bad input: a BadRequestError naming the field', async () => {
      await assert.rejects(
        client().responses.create({ model: 'tandem', input: [{ type: 'item_reference', id: 'x' }] }),
        (err) => err.status === 400 && err.param === 'input[0].type');
      await assert.rejects(
        client().responses.create({ model: 'tandem', input: 'x', tools: [{ type: 'web_search' }] }),
        (err) => err.status === 400 && err.param === 'tools[0].type' && /function tools/.test(err.message));
      await assert.rejects(
        client().responses.create({ model: 'tandem', input: 'x', max_output_tokens: 0 }),
        (err) => err.status === 400 && err.param === 'max_output_tokens');
    });
  });

  describe('Vercel AI SDK, default openai() provider (Responses)', () => {
    const provider = () => createOpenAI({ baseURL, apiKey: API_KEY });
    const common = { maxOutputTokens: MAX_TOKENS, maxRetries: 0 };

    test('generateText: text from /v1/responses', async () => {
      const requests = [];
      const openai = createOpenAI({
        baseURL, apiKey: API_KEY,
        fetch: async (url, init) => { requests.push(String(url)); return fetch(url, init); },
      });
      const result = await generateText({ ...common, maxOutputTokens: 16, model: openai('tandem'), prompt: 'Once upon a time' });
      assert.ok(requests.every((url) => url.endsWith('/responses')), requests.join(', '));
      assert.ok(result.text.length > 0);
      assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0,
                JSON.stringify(result.usage));
    });

    test('streamText: the text arrives in pieces', async () => {
      const result = streamText({ ...common, maxOutputTokens: 16, model: provider()('tandem'), prompt: 'Once upon a time' });
      const pieces = [];
      for await (const piece of result.textStream) pieces.push(piece);
      assert.ok(pieces.length > 1, `several pieces (${pieces.length})`);
      assert.equal(pieces.join(''), await result.text);
    });

    test('generateText with a tool, toolChoice "required": a valid call', async () => {
      const result = await generateText({
        ...common, model: provider()('tandem'), prompt: 'What is the weather in Paris?',
        tools: { get_weather: tool({ description: 'Current weather in a city', inputSchema: WeatherArgs }) },
        toolChoice: 'required',
      });
      assert.equal(result.toolCalls.length, 1, JSON.stringify(result.toolCalls));
      const [call] = result.toolCalls;
      assert.equal(call.toolName, 'get_weather');
      assert.ok(!call.invalid, `the SDK accepted the call: ${JSON.stringify(call)}`);
      WeatherArgs.parse(call.input);
    });
  });
});

// The fault upstream's answer: its words cycled, one a token, 8 by default.
const FAULT_TEXT = 'Hello from the fault upstream . Hello from';

function nativeConfig({ port, faultPort }) {
  const q = JSON.stringify;
  return `# Written by tests/e2e/responses_api.test.mjs: a cloud model behind a Responses upstream
server:
  host: 127.0.0.1
  port: ${port}
  shutdown_grace_ms: 1000
  api_keys:
    - name: responses
      key_env: TANDEM_TEST_KEY
edge:
  model: ${q(TANDEM_MODEL)}
  threads: 1
cloud:
  upstreams:
    - name: native
      base_url: http://127.0.0.1:${faultPort}/v1
      api: responses
      models: {gpt-native: fault-ok}
      health: {interval_ms: 0}
operations:
  device: {when_throttled: none}
`;
}

describe('the Responses API against a native Responses upstream (api: responses)', { timeout: 120_000 }, () => {
  let gateway;
  let fault;
  let baseURL;
  let tmpDir;

  before(async () => {
    tmpDir = makeTempDir('tandem-e2e-responses-native-');
    const [port, faultPort] = await freePorts(2);
    baseURL = `http://127.0.0.1:${port}/v1`;
    fault = startFaultUpstream({ faultUpstream: resolveFaultUpstream(), port: faultPort });
    await fault.waitReady();
    gateway = startGateway({
      tandemBinary: TANDEM_BINARY, dir: tmpDir, config: nativeConfig({ port, faultPort }), port,
      env: { TANDEM_TEST_KEY: API_KEY },
    });
    await gateway.waitReady();
  }, { timeout: READY_TIMEOUT_MS + 10_000 });

  after(async () => {
    await gateway?.stop();
    await fault?.stop();
    removeTempDir(tmpDir);
    tmpDir = undefined;
    gateway?.assertStoppedCleanly();
  });

  afterEach(async (t) => restartIfDown(gateway, t));

  const client = () => new OpenAI({ apiKey: API_KEY, baseURL, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
  const webSearch = { model: 'gpt-native', input: 'Find the news', tools: [{ type: 'web_search' }] };

  test('responses.create with web_search: the upstream\'s items under Tandem\'s id', async () => {
    const response = await client().responses.create(webSearch);
    assert.match(response.id, /^resp_/);
    assert.ok(!response.id.includes('fault'), 'Tandem\'s id, not the upstream\'s');
    assert.equal(response.model, 'gpt-native');
    assert.deepEqual(response.output.map((item) => item.type), ['web_search_call', 'message']);
    assert.equal(response.output[0].action.query, 'Find the news');
    assert.equal(response.output_text, FAULT_TEXT);
    assert.equal(response.output[1].content[0].annotations[0].type, 'url_citation');
    assert.equal(response.usage.output_tokens, 8);
    assert.deepEqual(response.tools, [{ type: 'web_search' }]);
    assert.equal(response.tandem.tier, 'cloud');
    assert.equal(response.tandem.models.cloud.upstream, 'native');
  });

  test('stream: the upstream\'s events, numbered in order, ending with the decision', async () => {
    const stream = await client().responses.create({ ...webSearch, stream: true });
    const types = [];
    const ids = new Set();
    let text = '';
    let sequence = -1;
    let last;
    for await (const event of stream) {
      types.push(event.type);
      assert.equal(event.sequence_number, sequence + 1, 'sequence numbers count up by one');
      sequence = event.sequence_number;
      if (event.response) ids.add(event.response.id);
      if (event.type === 'response.output_text.delta') text += event.delta;
      last = event;
    }
    assert.deepEqual(types.slice(0, 2), ['response.created', 'response.in_progress']);
    assert.ok(types.includes('response.web_search_call.searching'), types.join(', '));
    assert.equal(last.type, 'response.completed');
    assert.equal(ids.size, 1, 'one response id throughout');
    assert.equal(text, FAULT_TEXT);
    assert.equal(last.response.output_text ?? last.response.output[1].content[0].text, FAULT_TEXT);
    assert.equal(last.response.tandem.tier, 'cloud');
  });

  test('responses.stream helper: finalResponse() has the streamed text', async () => {
    const stream = client().responses.stream(webSearch);
    let deltas = '';
    stream.on('response.output_text.delta', (event) => { deltas += event.delta; });
    const response = await stream.finalResponse();
    assert.equal(response.output_text, deltas);
    assert.equal(response.output[0].type, 'web_search_call');
  });

  test('previous_response_id continues through Tandem\'s store; retrieve returns the items', async () => {
    const first = await client().responses.create(webSearch);
    const second = await client().responses.create({
      ...webSearch, input: 'And then?', previous_response_id: first.id,
    });
    assert.equal(second.previous_response_id, first.id);
    // The whole conversation went up again: the first turn's words count as input too.
    assert.ok(second.usage.input_tokens > first.usage.input_tokens,
              `${second.usage.input_tokens} > ${first.usage.input_tokens}`);
    const fetched = await client().responses.retrieve(first.id);
    assert.deepEqual(fetched.output.map((item) => item.type), ['web_search_call', 'message']);
  });

  test('web_search on the routed model is still a 400 naming the tool', async () => {
    await assert.rejects(
      client().responses.create({ ...webSearch, model: 'tandem' }),
      (err) => err.status === 400 && err.param === 'tools[0].type');
  });
});
