// End-to-end: the client libraries applications build on — OpenAI's Node client, Vercel's AI
// SDK and LangChain JS — calling tools and asking for structured output from `tandem serve`.
//
// The gateway runs edge-only (no cloud configured): every answer comes from the shipped
// stories260K model. That model has no chat template, so the edge uses Tandem's generic tool
// format, constrained by the tools' JSON schemas: the story model's arguments are nonsense
// strings, but valid JSON of the schema's shape. Every check below parses what came back with
// a strict zod schema (types, enums, maxLength, no extra keys), so a misshapen answer fails.
// String fields carry maxLength: unbounded, the story model may write until max_tokens.
//
// Environment (tests/e2e/run.sh sets it): TANDEM_BINARY, TANDEM_MODEL (harness.mjs).

import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamObject, streamText, tool } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { tool as langchainTool } from '@langchain/core/tools';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';

import {
  READY_TIMEOUT_MS, freePorts, makeTempDir, removeTempDir, resolveEdgePaths, restartIfDown,
  startGateway,
} from './harness.mjs';

const API_KEY = 'tandem-e2e-libraries-key';
const EDGE_MODEL = 'stories-edge';
const REQUEST_TIMEOUT_MS = 30_000;
// Tandem's generic tool format spends ~20 tokens on its envelope; a call fits well within this.
const MAX_TOKENS = 160;

const { tandemBinary: TANDEM_BINARY, model: TANDEM_MODEL } = resolveEdgePaths();

// ---------------------------------------------------------------------------------------------
// Schemas: what the libraries send (converted to JSON schema by each library) and, strict, what
// the answers must match.

const WeatherArgs = z.object({
  city: z.string().max(12).describe('the city'),
  unit: z.enum(['celsius', 'fahrenheit']),
}).strict();
const TimeArgs = z.object({ zone: z.enum(['utc', 'cet']) }).strict();
const Cat = z.object({ name: z.string().max(12), age: z.number().int() }).strict();
// Nested object, array with maxItems, enum, boolean, nullable: the JSON-schema features the
// libraries' converters emit most.
const Task = z.object({
  title: z.string().max(16),
  done: z.boolean(),
  priority: z.enum(['low', 'high']),
  tags: z.array(z.string().max(8)).max(2),
  owner: z.object({ name: z.string().max(10), email: z.string().max(12).nullable() }).strict(),
}).strict();

// The same tools as raw OpenAI JSON (what an app without a schema library writes).
const WEATHER_TOOL = {
  type: 'function',
  function: {
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
  },
};
const TIME_TOOL = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'Current time in a zone',
    parameters: {
      type: 'object',
      properties: { zone: { type: 'string', enum: ['utc', 'cet'] } },
      required: ['zone'],
      additionalProperties: false,
    },
  },
};

// Parses `value` (a JSON string unless `parsed`) with the strict `schema`; fails with the text.
function assertShape(schema, value, where, { parsed = false } = {}) {
  let data = value;
  if (!parsed) {
    assert.equal(typeof value, 'string', `${where}: a JSON string, got ${JSON.stringify(value)}`);
    try {
      data = JSON.parse(value);
    } catch (err) {
      assert.fail(`${where}: not JSON (${err.message}): ${JSON.stringify(value)}`);
    }
  }
  const result = schema.safeParse(data);
  assert.ok(result.success,
            `${where}: does not match the schema: ${JSON.stringify(data)}; ${result.error?.message}`);
  return result.data;
}

// A fetch that remembers each request's JSON body, so a test can check what a library sent
// (e.g. that it asked for json_schema rather than describing the schema in the prompt).
function recordingFetch() {
  const bodies = [];
  const record = async (url, init) => {
    if (typeof init?.body === 'string') bodies.push(JSON.parse(init.body));
    return fetch(url, init);
  };
  return { fetch: record, bodies };
}

// The one tool call of a non-streaming OpenAI chat completion, checked for OpenAI's shape.
function singleToolCall(completion, where) {
  const [choice] = completion.choices;
  const why = JSON.stringify(choice);
  assert.equal(choice.finish_reason, 'tool_calls', `${where}: finish_reason "tool_calls": ${why}`);
  assert.equal(choice.message.role, 'assistant', why);
  assert.equal(choice.message.content, null, `${where}: no text beside the call: ${why}`);
  assert.equal(choice.message.tool_calls?.length, 1, `${where}: exactly one tool call: ${why}`);
  const [call] = choice.message.tool_calls;
  assert.equal(call.type, 'function', why);
  assert.match(call.id, /^call_/, `${where}: an id "call_…": ${why}`);
  return call;
}

// Reads a chat stream's tool-call deltas back into whole calls, checking OpenAI's delta shape:
// id, type and name on a call's first delta, arguments in pieces.
async function collectToolCallStream(stream) {
  const calls = [];
  const finishReasons = [];
  let content = '';
  let chunks = 0;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const choice of chunk.choices) {
      if (choice.finish_reason) finishReasons.push(choice.finish_reason);
      content += choice.delta?.content ?? '';
      for (const delta of choice.delta?.tool_calls ?? []) {
        const why = JSON.stringify(delta);
        assert.ok(Number.isInteger(delta.index), `a tool-call delta has an integer index: ${why}`);
        let call = calls[delta.index];
        if (!call) {
          assert.match(delta.id ?? '', /^call_/, `a call's first delta carries its id: ${why}`);
          assert.equal(delta.type, 'function', `a call's first delta carries its type: ${why}`);
          assert.equal(typeof delta.function?.name, 'string', `a call's first delta names it: ${why}`);
          call = calls[delta.index] = { id: delta.id, name: delta.function.name, arguments: '' };
        } else {
          assert.ok(!delta.id || delta.id === call.id, `a later delta keeps the call's id: ${why}`);
        }
        call.arguments += delta.function?.arguments ?? '';
      }
    }
  }
  return { calls, finishReasons, content, chunks };
}

// ---------------------------------------------------------------------------------------------
// The gateway: edge only, the shipped model

function gatewayConfig({ port }) {
  const q = JSON.stringify;  // JSON strings are valid YAML scalars
  return `# Written by tests/e2e/client_libraries.test.mjs: edge only, no cloud
server:
  host: 127.0.0.1
  port: ${port}
  shutdown_grace_ms: 1000
  api_keys:
    - name: libraries
      key_env: TANDEM_TEST_KEY
edge:
  model: ${q(TANDEM_MODEL)}
  name: ${EDGE_MODEL}
  # One thread: llama.cpp's workers spin-wait between steps, and with every core busy (a build,
  # the other suites) a constrained request then takes seconds instead of ~0.1 s.
  threads: 1
operations:
  device: {when_throttled: none}
`;
}

describe('client libraries against tandem serve (edge only)', { timeout: 240_000 }, () => {
  let gateway;
  let baseURL;
  let tmpDir;

  before(async () => {
    tmpDir = makeTempDir('tandem-e2e-libraries-');
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

  // -------------------------------------------------------------------------------------------
  describe('OpenAI Node client (openai)', () => {
    // No retries: a retried request would hide the failures this suite looks for.
    const client = () => new OpenAI({ apiKey: API_KEY, baseURL, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
    const request = (overrides = {}) => ({
      model: 'tandem',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      temperature: 0,
      max_tokens: MAX_TOKENS,
      ...overrides,
    });

    test('tools, tool_choice "required": one schema-shaped call, from the edge', async () => {
      const { data, response } = await client().chat.completions
        .create(request({ tools: [WEATHER_TOOL, TIME_TOOL], tool_choice: 'required' })).withResponse();
      assert.equal(response.headers.get('x-tandem-tier'), 'edge');
      const call = singleToolCall(data, 'required');
      assert.ok(['get_weather', 'get_time'].includes(call.function.name),
                `a declared tool: ${JSON.stringify(call)}`);
      assertShape(call.function.name === 'get_weather' ? WeatherArgs : TimeArgs,
                  call.function.arguments, 'arguments');
      assert.ok(data.usage.completion_tokens > 0 && data.usage.prompt_tokens > 0,
                `usage: ${JSON.stringify(data.usage)}`);
    });

    test('tool_choice naming a function: that function is called', async () => {
      const data = await client().chat.completions.create(request({
        tools: [WEATHER_TOOL, TIME_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      }));
      const call = singleToolCall(data, 'named');
      assert.equal(call.function.name, 'get_time');
      assertShape(TimeArgs, call.function.arguments, 'get_time arguments');
    });

    test('tools, streaming: delta.tool_calls add up to the non-streaming call', async () => {
      const body = request({ tools: [WEATHER_TOOL], tool_choice: 'required' });
      const whole = singleToolCall(await client().chat.completions.create(body), 'non-streaming');
      const stream = await client().chat.completions.create({ ...body, stream: true });
      const { calls, finishReasons, content } = await collectToolCallStream(stream);
      assert.deepEqual(finishReasons, ['tool_calls'], 'exactly one finish_reason, "tool_calls"');
      assert.equal(content, '', 'no text deltas beside the call');
      assert.equal(calls.length, 1, `one call: ${JSON.stringify(calls)}`);
      assert.equal(calls[0].name, 'get_weather');
      assertShape(WeatherArgs, calls[0].arguments, 'streamed arguments');
      // Greedy decoding: the same call as without streaming.
      assert.equal(calls[0].arguments, whole.function.arguments,
                   'streamed arguments equal the non-streaming ones');
    });

    test('chat.completions.stream helper with zodFunction tools: parsed_arguments', async () => {
      const runner = client().chat.completions.stream(request({
        tools: [zodFunction({ name: 'get_weather', parameters: WeatherArgs })],
        tool_choice: 'required',
      }));
      const final = await runner.finalChatCompletion();
      const call = singleToolCall(final, 'stream helper');
      assert.equal(call.function.name, 'get_weather');
      assertShape(WeatherArgs, call.function.parsed_arguments, 'parsed_arguments', { parsed: true });
    });

    test('runTools: the client runs the tool and sends its result back', async () => {
      const invocations = [];
      const runner = client().chat.completions.runTools(request({
        tools: [{
          type: 'function',
          function: {
            ...WEATHER_TOOL.function,
            function: (args) => {
              invocations.push(args);
              return JSON.stringify({ temperature: 21 });
            },
            parse: JSON.parse,
          },
        }],
        tool_choice: 'required',
      }), { maxChatCompletions: 2 });
      const final = await runner.finalChatCompletion();
      assert.ok(final.choices?.length === 1, `a final completion: ${JSON.stringify(final)}`);
      assert.ok(invocations.length >= 1, 'the tool ran');
      for (const args of invocations) assertShape(WeatherArgs, args, 'tool input', { parsed: true });
      // The conversation the helper built: each tool result answers a call the gateway made.
      const callIds = runner.messages.filter((m) => m.role === 'assistant')
        .flatMap((m) => m.tool_calls ?? []).map((c) => c.id);
      const results = runner.messages.filter((m) => m.role === 'tool');
      assert.ok(results.length >= 1, `tool results in the history: ${JSON.stringify(runner.messages)}`);
      for (const result of results) assert.ok(callIds.includes(result.tool_call_id), JSON.stringify(result));
    });

    test('round trip: assistant tool_calls and a tool result in the history', async () => {
      const first = await client().chat.completions.create(
        request({ tools: [WEATHER_TOOL], tool_choice: 'required' }));
      const call = singleToolCall(first, 'first turn');
      assertShape(WeatherArgs, call.function.arguments, 'first turn arguments');
      const history = [
        ...request().messages,
        first.choices[0].message,  // as the client returned it: content null, tool_calls
        { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 21 }) },
      ];
      const withResult = await client().chat.completions.create(
        request({ messages: history, tools: [WEATHER_TOOL], tool_choice: 'none', max_tokens: 24 }));
      const [choice] = withResult.choices;
      assert.ok(['stop', 'length'].includes(choice.finish_reason), JSON.stringify(choice));
      assert.equal(typeof choice.message.content, 'string', JSON.stringify(choice));
      assert.ok(choice.message.content.length > 0, 'a text answer');
      assert.equal(choice.message.tool_calls, undefined,
                   `no call with tool_choice "none": ${JSON.stringify(choice)}`);
      // The tool's result reached the prompt: without it the same request is shorter.
      const withoutResult = await client().chat.completions.create(request({
        messages: history.slice(0, 2), tools: [WEATHER_TOOL], tool_choice: 'none', max_tokens: 1,
      }));
      assert.ok(withResult.usage.prompt_tokens > withoutResult.usage.prompt_tokens,
                `the tool message is in the prompt (${withResult.usage.prompt_tokens} vs ` +
                `${withoutResult.usage.prompt_tokens} prompt tokens without it)`);
    });

    test('response_format json_schema: content is JSON of the schema', async () => {
      const data = await client().chat.completions.create(request({
        messages: [{ role: 'user', content: 'Describe a cat' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'cat',
            strict: true,
            schema: {
              type: 'object',
              properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer' } },
              required: ['name', 'age'],
              additionalProperties: false,
            },
          },
        },
      }));
      assert.equal(data.choices[0].finish_reason, 'stop', JSON.stringify(data.choices[0]));
      assertShape(Cat, data.choices[0].message.content, 'json_schema content');
    });

    test('response_format json_object: content is a JSON object', async () => {
      const data = await client().chat.completions.create(request({
        messages: [{ role: 'user', content: 'Describe a cat in JSON' }],
        response_format: { type: 'json_object' },
      }));
      assert.equal(data.choices[0].finish_reason, 'stop', JSON.stringify(data.choices[0]));
      const value = JSON.parse(data.choices[0].message.content);
      assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value),
                `a JSON object: ${data.choices[0].message.content}`);
    });

    test('chat.completions.parse with zodResponseFormat: message.parsed', async () => {
      for (const [schema, name, prompt] of [[Cat, 'cat', 'Describe a cat'], [Task, 'task', 'A task']]) {
        const data = await client().chat.completions.parse(request({
          messages: [{ role: 'user', content: prompt }],
          response_format: zodResponseFormat(schema, name),
          max_tokens: 200,
        }));
        const [choice] = data.choices;
        assert.equal(choice.finish_reason, 'stop', `${name}: ${JSON.stringify(choice)}`);
        assertShape(schema, choice.message.parsed, `${name}: parsed`, { parsed: true });
        assertShape(schema, choice.message.content, `${name}: content`);
      }
    });

    test('chat.completions.stream with zodResponseFormat: JSON in pieces, parsed at the end', async () => {
      const runner = client().chat.completions.stream(request({
        messages: [{ role: 'user', content: 'Describe a cat' }],
        response_format: zodResponseFormat(Cat, 'cat'),
      }));
      let deltas = 0;
      runner.on('content.delta', () => { deltas += 1; });
      const final = await runner.finalChatCompletion();
      assert.ok(deltas > 1, `the JSON streamed in pieces (${deltas} deltas)`);
      assertShape(Cat, final.choices[0].message.parsed, 'parsed', { parsed: true });
    });

    // Found by this suite (the generic tool format's envelope came back as the answer's text).
    test('a tool call cut off by max_tokens does not leak the tool format as text', async () => {
      const data = await client().chat.completions.create(
        request({ tools: [WEATHER_TOOL], tool_choice: 'required', max_tokens: 12 }));
      const [choice] = data.choices;
      assert.equal(choice.finish_reason, 'length');
      assert.ok(!/"tool_call/.test(choice.message.content ?? ''),
                `the tool format's JSON is not the answer's text: ${JSON.stringify(choice.message)}`);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('Vercel AI SDK (ai, @ai-sdk/openai-compatible, @ai-sdk/openai)', () => {
    // supportsStructuredOutputs: without it the SDK sends json_object and describes the schema
    // in the prompt, which the story model cannot follow.
    const provider = (fetch) => createOpenAICompatible({
      name: 'tandem', baseURL, apiKey: API_KEY, supportsStructuredOutputs: true, includeUsage: true,
      ...(fetch ? { fetch } : {}),
    });
    const common = { temperature: 0, maxOutputTokens: MAX_TOKENS, maxRetries: 0 };
    const weatherTool = () => tool({ description: 'Current weather in a city', inputSchema: WeatherArgs });

    test('generateObject with a zod schema: response_format json_schema, a valid object', async () => {
      const { fetch, bodies } = recordingFetch();
      const result = await generateObject({
        ...common, model: provider(fetch)('tandem'), schema: Cat, prompt: 'Describe a cat',
      });
      assert.equal(bodies[0]?.response_format?.type, 'json_schema',
                   `the SDK asked for json_schema: ${JSON.stringify(bodies[0]?.response_format)}`);
      assert.equal(result.finishReason, 'stop');
      assertShape(Cat, result.object, 'object', { parsed: true });
      assert.ok(result.usage.inputTokens > 0 && result.usage.outputTokens > 0,
                `usage: ${JSON.stringify(result.usage)}`);
    });

    test('generateObject, nested schema', async () => {
      const result = await generateObject({
        ...common, maxOutputTokens: 200, model: provider()('tandem'), schema: Task, prompt: 'A task',
      });
      assertShape(Task, result.object, 'object', { parsed: true });
    });

    test('streamObject: partial objects, then a valid one', async () => {
      const result = streamObject({
        ...common, model: provider()('tandem'), schema: Cat, prompt: 'Describe a cat',
      });
      const partials = [];
      for await (const partial of result.partialObjectStream) partials.push(partial);
      assert.ok(partials.length > 1, `several partial objects (${partials.length})`);
      assertShape(Cat, await result.object, 'object', { parsed: true });
    });

    test('generateText with tools, toolChoice "required": toolCalls[0] with a valid input', async () => {
      const result = await generateText({
        ...common, model: provider()('tandem'), prompt: 'What is the weather in Paris?',
        tools: { get_weather: weatherTool() }, toolChoice: 'required',
      });
      assert.equal(result.finishReason, 'tool-calls');
      assert.equal(result.toolCalls.length, 1, JSON.stringify(result.toolCalls));
      const [call] = result.toolCalls;
      assert.equal(call.toolName, 'get_weather');
      assert.ok(!call.invalid && !call.dynamic, `the SDK accepted the call: ${JSON.stringify(call)}`);
      assert.match(call.toolCallId, /^call_/);
      assertShape(WeatherArgs, call.input, 'input', { parsed: true });
      assert.equal(result.response.headers?.['x-tandem-tier'], 'edge');
    });

    test('generateText, two steps: the tool runs, its result goes back, a text answer', async () => {
      const { fetch, bodies } = recordingFetch();
      const inputs = [];
      const result = await generateText({
        ...common, model: provider(fetch)('tandem'),
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'Current weather in a city',
            inputSchema: WeatherArgs,
            execute: async (input) => { inputs.push(input); return { temperature: 21 }; },
          }),
        },
        toolChoice: 'required',
        // The second step answers in text.
        prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'none' } : undefined),
        stopWhen: stepCountIs(2),
      });
      assert.equal(result.steps.length, 2,
                   `two steps: ${JSON.stringify(result.steps.map((s) => s.finishReason))}`);
      assert.equal(inputs.length, 1, 'the tool ran once');
      assertShape(WeatherArgs, inputs[0], 'tool input', { parsed: true });
      const sent = bodies[1]?.messages ?? [];
      const toolMessage = sent.find((m) => m.role === 'tool');
      assert.ok(toolMessage, `the second request carries the tool result: ${JSON.stringify(sent)}`);
      assert.equal(toolMessage.tool_call_id, result.steps[0].toolCalls[0].toolCallId);
      assert.ok(sent.some((m) => m.role === 'assistant' && m.tool_calls?.length === 1),
                'and the assistant turn that called it');
      assert.ok(['stop', 'length'].includes(result.finishReason), result.finishReason);
      assert.ok(result.text.length > 0, 'the last step answered in text');
    });

    test('streamText with tools: a tool-call part with a valid input', async () => {
      const result = streamText({
        ...common, model: provider()('tandem'), prompt: 'What is the weather in Paris?',
        tools: { get_weather: weatherTool() }, toolChoice: 'required',
      });
      const parts = [];
      for await (const part of result.fullStream) {
        assert.notEqual(part.type, 'error', `no error part: ${JSON.stringify(part)}`);
        parts.push(part);
      }
      const calls = parts.filter((p) => p.type === 'tool-call');
      assert.equal(calls.length, 1, `one tool-call part: ${JSON.stringify(parts.map((p) => p.type))}`);
      assert.equal(calls[0].toolName, 'get_weather');
      assertShape(WeatherArgs, calls[0].input, 'input', { parsed: true });
      assert.equal(await result.finishReason, 'tool-calls');
      const usage = await result.usage;
      assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0, `usage: ${JSON.stringify(usage)}`);
    });

    test('@ai-sdk/openai, chat model: generateObject and a named tool', async () => {
      const openai = createOpenAI({ baseURL, apiKey: API_KEY });
      const object = await generateObject({
        ...common, model: openai.chat('tandem'), schema: Cat, prompt: 'Describe a cat',
      });
      assertShape(Cat, object.object, 'object', { parsed: true });
      const text = await generateText({
        ...common, model: openai.chat('tandem'), prompt: 'What is the weather in Paris?',
        tools: { get_weather: weatherTool() }, toolChoice: { type: 'tool', toolName: 'get_weather' },
      });
      assert.equal(text.toolCalls[0]?.toolName, 'get_weather', JSON.stringify(text.toolCalls));
      assertShape(WeatherArgs, text.toolCalls[0].input, 'input', { parsed: true });
    });

    // Gateway gap, found by this suite: see the skip reason. Remove the skip once it is served.
    test('@ai-sdk/openai, default model (Responses API)', {
      skip: 'gateway gap: @ai-sdk/openai@2 `openai(model)` posts to /v1/responses, which answers ' +
            '404 "no such endpoint: /v1/responses"; apps must use `openai.chat(model)`',
    }, async () => {
      const openai = createOpenAI({ baseURL, apiKey: API_KEY });
      const result = await generateText({
        ...common, maxOutputTokens: 24, model: openai('tandem'), prompt: 'Once upon a time',
      });
      assert.ok(result.text.length > 0);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('LangChain JS (@langchain/openai ChatOpenAI)', () => {
    const chat = (fetch) => new ChatOpenAI({
      model: 'tandem', apiKey: API_KEY, temperature: 0, maxTokens: MAX_TOKENS, maxRetries: 0,
      timeout: REQUEST_TIMEOUT_MS,
      configuration: { baseURL, ...(fetch ? { fetch } : {}) },
    });
    const weatherTool = () => langchainTool(async () => JSON.stringify({ temperature: 21 }), {
      name: 'get_weather', description: 'Current weather in a city', schema: WeatherArgs,
    });

    test('withStructuredOutput, method "jsonSchema": response_format json_schema, a valid object', async () => {
      const { fetch, bodies } = recordingFetch();
      const result = await chat(fetch).withStructuredOutput(Cat, { name: 'cat', method: 'jsonSchema' })
        .invoke('Describe a cat');
      assert.equal(bodies[0]?.response_format?.type, 'json_schema', JSON.stringify(bodies[0]));
      assertShape(Cat, result, 'structured output', { parsed: true });
    });

    test('withStructuredOutput, method "functionCalling" (a forced tool call): a valid object', async () => {
      const { fetch, bodies } = recordingFetch();
      const result = await chat(fetch).withStructuredOutput(Cat, { name: 'cat', method: 'functionCalling' })
        .invoke('Describe a cat');
      assert.equal(bodies[0]?.tool_choice?.function?.name, 'cat',
                   `LangChain forced the "cat" tool: ${JSON.stringify(bodies[0]?.tool_choice)}`);
      assertShape(Cat, result, 'structured output', { parsed: true });
    });

    test('withStructuredOutput with includeRaw: the raw message and the parsed object', async () => {
      // No method: @langchain/openai 0.6 then uses "jsonSchema".
      const result = await chat().withStructuredOutput(Task, { name: 'task', includeRaw: true })
        .invoke('A task');
      assert.ok(result.raw?.content, `the raw AIMessage: ${JSON.stringify(result.raw)}`);
      assertShape(Task, result.parsed, 'parsed', { parsed: true });
      assertShape(Task, result.raw.content, 'raw content');
    });

    test('bindTools, tool_choice "required": tool_calls[0] with valid args', async () => {
      const message = await chat().bindTools([weatherTool()], { tool_choice: 'required' })
        .invoke('What is the weather in Paris?');
      assert.equal(message.tool_calls?.length, 1, JSON.stringify(message));
      const [call] = message.tool_calls;
      assert.equal(call.name, 'get_weather');
      assert.match(call.id, /^call_/);
      assertShape(WeatherArgs, call.args, 'args', { parsed: true });
      assert.deepEqual(message.invalid_tool_calls ?? [], [], 'no invalid tool calls');
      assert.equal(message.response_metadata?.finish_reason, 'tool_calls');
    });

    test('bindTools, streaming: chunks concatenate to a valid call', async () => {
      let message;
      const stream = await chat().bindTools([weatherTool()], { tool_choice: 'required' })
        .stream('What is the weather in Paris?');
      for await (const chunk of stream) message = message ? message.concat(chunk) : chunk;
      assert.equal(message.tool_calls?.length, 1, JSON.stringify(message));
      assert.equal(message.tool_calls[0].name, 'get_weather');
      assertShape(WeatherArgs, message.tool_calls[0].args, 'args', { parsed: true });
      assert.ok(message.usage_metadata?.input_tokens > 0, `usage: ${JSON.stringify(message.usage_metadata)}`);
    });

    test('round trip: the tool runs, a ToolMessage goes back, a text answer', async () => {
      const weather = weatherTool();
      const question = new HumanMessage('What is the weather in Paris?');
      const called = await chat().bindTools([weather], { tool_choice: 'required' }).invoke([question]);
      assert.equal(called.tool_calls?.length, 1, JSON.stringify(called));
      assertShape(WeatherArgs, called.tool_calls[0].args, 'args', { parsed: true });
      const result = await weather.invoke(called.tool_calls[0]);
      assert.ok(result instanceof ToolMessage,
                `the tool answered a ToolMessage: ${result?.constructor?.name}`);
      assert.equal(result.tool_call_id, called.tool_calls[0].id);
      const answer = await chat().bindTools([weather], { tool_choice: 'none' })
        .invoke([question, called, result]);
      assert.equal(typeof answer.content, 'string');
      assert.ok(answer.content.length > 0, `a text answer: ${JSON.stringify(answer)}`);
      assert.deepEqual(answer.tool_calls ?? [], [], 'no call with tool_choice "none"');
    });
  });
});
