// Shared plumbing for the end-to-end suites: where the binaries and the model are, free
// loopback ports, llama-server and `tandem serve` as child processes, health polling, and
// clean-up. Not a test file itself (the name does not match `node --test`'s patterns).
//
// Environment (tests/e2e/run.sh sets all three):
//   TANDEM_BINARY  the gateway (default: <repo>/build/tandem)
//   LLAMA_SERVER   llama.cpp's server (default: scripts/build-llama.sh's prefix + /bin/llama-server)
//   TANDEM_MODEL   the GGUF both tiers serve (default: <repo>/models/stories260K.gguf)

import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const READY_TIMEOUT_MS = 30_000;

// ---------------------------------------------------------------------------------------------
// Paths from the environment

function llamaServerFromCache() {
  // build-llama.sh prints its install prefix last; with a warm cache it returns at once.
  const out = execFileSync(path.join(REPO_ROOT, 'scripts', 'build-llama.sh'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return path.join(out.trim().split('\n').pop(), 'bin', 'llama-server');
}

function requireExecutable(file, variable) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    throw new Error(`${variable}=${file} is not an executable file; build it or set ${variable}`);
  }
  return file;
}

// The gateway and the GGUF, from the environment or their defaults; throws when one is
// missing. For suites that run `tandem serve` without a cloud tier.
export function resolveEdgePaths() {
  const tandemBinary = requireExecutable(
    process.env.TANDEM_BINARY || path.join(REPO_ROOT, 'build', 'tandem'), 'TANDEM_BINARY');
  const model = process.env.TANDEM_MODEL || path.join(REPO_ROOT, 'models', 'stories260K.gguf');
  assert.ok(fs.existsSync(model), `TANDEM_MODEL=${model} does not exist`);
  return { tandemBinary, model };
}

// tests/support/fault_upstream (a mock OpenAI upstream that also speaks the Responses API),
// from FAULT_UPSTREAM or the build directory; throws when it is missing.
export function resolveFaultUpstream() {
  return requireExecutable(
    process.env.FAULT_UPSTREAM || path.join(REPO_ROOT, 'build', 'tests', 'support', 'fault_upstream'),
    'FAULT_UPSTREAM');
}

// The gateway, llama-server and the GGUF, from the environment or their defaults; throws
// when one is missing.
export function resolvePaths() {
  const { tandemBinary, model } = resolveEdgePaths();
  const llamaServer = requireExecutable(
    process.env.LLAMA_SERVER || llamaServerFromCache(), 'LLAMA_SERVER');
  return { tandemBinary, llamaServer, model };
}

// ---------------------------------------------------------------------------------------------
// Child processes and temp dirs

// Every child still running, and every temp dir; cleaned up on any way out of this process,
// so a failed or interrupted run never leaves a server holding a port.
const liveChildren = new Set();
const tempDirs = new Set();
process.on('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => process.exit(128 + os.constants.signals[signal]));
}

// A fresh directory in the OS temp dir, removed by removeTempDir or at exit.
export function makeTempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  if (!dir) return;
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

// `count` distinct ports nobody listens on right now: the kernel picks them while we hold
// them all (so no two are alike), then we release them and pass them on. Neither server can
// report the port it bound, so the short window before they bind is accepted.
export async function freePorts(count) {
  const probes = await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => resolve(probe));
  })));
  const ports = probes.map((probe) => probe.address().port);
  await Promise.all(probes.map((probe) => new Promise((resolve) => probe.close(resolve))));
  return ports;
}

export function portIsFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

// One server process: keeps the tail of its output for failure messages and knows whether
// (and how) it has exited.
export class ServerProcess {
  constructor(name, command, args, { env = process.env, healthUrl }) {
    Object.assign(this, { name, command, args, env, healthUrl });
    this.child = null;
    this.exit = null;  // {code, signal} once the process is gone
    this.output = [];
  }

  start() {
    this.exit = null;
    this.output = [];
    const child = spawn(this.command, this.args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    liveChildren.add(child);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        liveChildren.delete(child);
        this.exit = { code, signal };
        resolve(this.exit);
      });
      child.on('error', (err) => {  // e.g. ENOENT: no 'exit' follows
        liveChildren.delete(child);
        this.exit = { code: null, signal: null, error: err.message };
        resolve(this.exit);
      });
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (text) => this.remember(text));
    }
  }

  remember(text) {
    this.output.push(...text.split('\n'));
    if (this.output.length > 80) this.output.splice(0, this.output.length - 80);
  }

  get running() {
    return this.child !== null && this.exit === null;
  }

  // How the process ended and its last lines of output, for failure messages.
  report(lines = 12) {
    const how = !this.exit ? 'running'
      : this.exit.error ? `failed to start: ${this.exit.error}`
      : this.exit.signal ? `killed by ${this.exit.signal}` : `exited with code ${this.exit.code}`;
    const tail = this.output.filter((line) => line.trim() !== '').slice(-lines);
    return `${this.name} ${how}; its last output: ${tail.join(' | ')}`;
  }

  // Polls the health URL until it answers 200; fails fast if the process dies first.
  async waitReady(timeoutMs = READY_TIMEOUT_MS) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(this.report());
      if (await isHealthy(this.healthUrl)) return;
      await sleep(50);
    }
    throw new Error(`${this.name} was not ready at ${this.healthUrl} within ${timeoutMs} ms. ` +
                    this.report());
  }

  // SIGTERM first (a clean shutdown is part of what we run), SIGKILL if it lingers. The gateway
  // stops within its shutdown_grace_ms plus its exit, which a sanitizer's leak check on a loaded
  // machine stretches to seconds: 30 s is reached only by a process that hangs (and then
  // assertStoppedCleanly fails).
  async stop(graceMs = 30_000) {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    // The grace timer is cleared once the process is gone: left pending, it would keep the
    // test file's process alive for the whole grace period after its last test.
    let timer;
    const grace = new Promise((resolve) => { timer = setTimeout(() => resolve(null), graceMs); });
    const gone = await Promise.race([this.exited, grace]);
    clearTimeout(timer);
    if (!gone) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  // After stop(): throws unless the process exited 0 on SIGTERM. Under scripts/sanitize.sh a
  // sanitizer's report in the gateway (at once, or at exit for leaks) ends it otherwise.
  assertStoppedCleanly() {
    assert.ok(this.exit && this.exit.code === 0, `not a clean stop: ${this.report(80)}`);
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function isHealthy(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;  // not listening yet
  }
}

// ---------------------------------------------------------------------------------------------
// The two servers. Both return a started ServerProcess; the caller awaits waitReady().

// llama.cpp's llama-server on `port`, serving `model` as an OpenAI-compatible cloud upstream.
// Tandem's edge feeds a lone user message to this template-less model as written; the default
// `chatTemplate` does the same on llama-server, so both tiers see the same prompt, hence the
// same text. Another template makes the cloud write something else (a disagreement).
export function startLlamaServer({
  llamaServer, model, port,
  chatTemplate = '{% for message in messages %}{{ message.content }}{% endfor %}',
}) {
  const llama = new ServerProcess('llama-server', llamaServer, [
    '-m', model, '--host', '127.0.0.1', '--port', String(port), '-c', '2048', '-np', '2', '-t', '1',
    '--jinja', '--chat-template', chatTemplate,
  ], { healthUrl: `http://127.0.0.1:${port}/health` });
  llama.start();
  return llama;
}

// fault_upstream on `port`: answers as the model named in each request says
// (tests/support/README.md); `fault-ok` answers normally.
export function startFaultUpstream({ faultUpstream, port }) {
  const fault = new ServerProcess('fault_upstream', faultUpstream, ['--port', String(port)], {
    healthUrl: `http://127.0.0.1:${port}/health`,
  });
  fault.start();
  return fault;
}

// `tandem serve` with `config` (YAML text) written to `dir`/tandem.yaml, on `port`, with
// `env` added to this process's environment (the API keys its config names in key_env).
export function startGateway({ tandemBinary, dir, config, port, env = {} }) {
  const configPath = path.join(dir, 'tandem.yaml');
  fs.writeFileSync(configPath, config);
  const gateway = new ServerProcess('tandem serve', tandemBinary, ['serve', '--config', configPath], {
    env: { ...process.env, ...env },
    healthUrl: `http://127.0.0.1:${port}/health`,
  });
  gateway.start();
  return gateway;
}

// ---------------------------------------------------------------------------------------------
// Crash detection between tests

// True once `server` answers /health, polling up to READY_TIMEOUT_MS; false at once if it has
// exited, or when it never answers.
export async function answersHealth(server) {
  try {
    await server.waitReady();
    return true;
  } catch {
    return false;
  }
}

// For an afterEach hook: a crash must fail the test that caused it, not every test after it.
// When `server` no longer answers, records its exit status and last output as a diagnostic of
// test `t`, starts it afresh for the remaining tests, and fails `t` with what happened (the
// client alone only says "Connection error").
export async function restartIfDown(server, t) {
  // A server that answers slowly (one /health probe gives up after 1 s) is not a dead one.
  if (await answersHealth(server)) return;
  // The client may see the reset a moment before the exit status is in.
  await Promise.race([server.exited, sleep(2_000)]);
  const what = server.report();
  t.diagnostic(`${server.name} down after this test: ${what}`);
  await server.stop();
  server.start();
  await server.waitReady();
  assert.fail(`${server.name} stopped answering during this test (restarted for the next ones): ${what}`);
}
