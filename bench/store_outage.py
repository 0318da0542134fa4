#!/usr/bin/env python3
"""A Redis outage under load: does a hung or dead shared store stall the gateway?

`tandem serve` (edge only, the shipped model, one thread) with `store.redis` set, under routed
requests that each carry `X-Tandem-Client` (so each looks up and stores a route in Redis), from
--clients threads on keep-alive connections, through four phases of --phase-seconds each:

  healthy    Redis answers
  hung       Redis stopped with SIGSTOP (a partition, a frozen host): connections stay open,
             nothing answers
  dead       Redis resumed, then killed: connections refused
  restarted  a fresh Redis on the same port (its data gone, as after a crash)

Per phase: requests answered and failed, client timeouts (a stalled connection: no answer in
--client-timeout-s), latency p50/p99/max, and how many requests took longer than twice the
healthy p99 (the outage's cost: at most the calls in flight when it began should wait, each at
most the store's command timeout). It also reads the gateway's /health and refused-call count.

    python3 bench/store_outage.py [--phase-seconds 30] [--clients 4] [--command-timeout-ms 2000]
                                  [--tandem BINARY]   # e.g. an earlier build, for comparison

Exit status 0 when every request of every phase was answered with 200 and none stalled.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from local_servers import MODEL, TANDEM, free_port, wait_ready  # noqa: E402

PHASES = ["healthy", "hung", "dead", "restarted"]


def start_redis(port, workdir):
    return subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_redis(port, timeout_s=10):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                          text=True).stdout.strip() == "PONG":
            return
        time.sleep(0.1)
    raise SystemExit("redis-server never answered")


def start_tandem(args, port, redis_port, workdir):
    config = os.path.join(workdir, "tandem.yaml")
    with open(config, "w") as f:
        f.write(f"server: {{host: 127.0.0.1, port: {port}}}\n"
                f"edge: {{model: {args.model}, threads: 1, default_max_tokens: 4}}\n"
                f"store:\n  redis: {{url: 'redis://127.0.0.1:{redis_port}', "
                f"command_timeout_ms: {args.command_timeout_ms}, "
                f"connect_timeout_ms: {args.command_timeout_ms}}}\n")
    log = open(os.path.join(workdir, "tandem.log"), "w")
    process = subprocess.Popen([args.tandem, "serve", "-c", config], stdout=log, stderr=log)
    wait_ready(port, process, "/health")
    return process


class Load:
    """--clients threads sending routed requests until stopped; latencies go to the phase
    that was current when each request was sent."""

    def __init__(self, port, clients, client_timeout_s):
        self.port = port
        self.clients = clients
        self.client_timeout_s = client_timeout_s
        self.phase = PHASES[0]
        self.results = {p: [] for p in PHASES}  # (seconds, status or error name)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(c,)) for c in range(clients)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join()

    def run(self, client):
        conn = None
        n = 0
        while not self.stopping.is_set():
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                  timeout=self.client_timeout_s)
            body = json.dumps({"model": "tandem", "max_tokens": 4, "messages": [
                {"role": "user", "content": f"Once upon a time {client} saw {n % 50}"}]})
            phase = self.phase
            start = time.perf_counter()
            try:
                conn.request("POST", "/v1/chat/completions", body,
                             {"Content-Type": "application/json",
                              "X-Tandem-Client": f"client-{client}"})
                response = conn.getresponse()
                response.read()
                outcome = response.status
            except TimeoutError:
                outcome = "stalled"
                conn.close()
                conn = None
            except OSError as e:
                outcome = type(e).__name__
                conn.close()
                conn = None
            with self.lock:
                self.results[phase].append((time.perf_counter() - start, outcome))
            n += 1


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def gateway_state(port):
    """The gateway's store_outage (None: reachable), or "unknown" when it cannot say."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/v1/tandem/status")
        status = json.loads(conn.getresponse().read())
        return status["gateway"].get("store_outage", "unknown")
    except (OSError, ValueError, KeyError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--phase-seconds", type=float, default=30)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--command-timeout-ms", type=int, default=2000,
                        help="store.redis command and connect timeouts (the default config's)")
    parser.add_argument("--client-timeout-s", type=float, default=10)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--tandem", default=TANDEM, help="the tandem binary to measure")
    args = parser.parse_args()
    for tool in ("redis-server", "redis-cli"):
        if shutil.which(tool) is None:
            raise SystemExit(f"store_outage: needs {tool} (scripts/install-deps.sh installs it)")

    workdir = tempfile.mkdtemp(prefix="tandem-store-outage.")
    redis_port, port = free_port(), free_port()
    redis = start_redis(redis_port, workdir)
    tandem = None
    try:
        wait_redis(redis_port)
        tandem = start_tandem(args, port, redis_port, workdir)
        load = Load(port, args.clients, args.client_timeout_s)
        load.start()
        outages = {}
        for phase in PHASES:
            load.phase = phase
            if phase == "hung":
                redis.send_signal(signal.SIGSTOP)
            elif phase == "dead":
                redis.send_signal(signal.SIGCONT)
                redis.kill()
                redis.wait()
            elif phase == "restarted":
                redis = start_redis(redis_port, workdir)
                wait_redis(redis_port)
            time.sleep(args.phase_seconds)
            outages[phase] = gateway_state(port)
        load.stop()
    finally:
        if tandem is not None:
            tandem.send_signal(signal.SIGTERM)
            tandem.wait()
        redis.send_signal(signal.SIGCONT)
        redis.kill()
        redis.wait()

    healthy = sorted(s for s, o in load.results["healthy"] if o == 200)
    bound = 2 * percentile(healthy, 0.99)
    ok = True
    print(f"clients {args.clients}, {args.phase_seconds:g} s per phase, store command timeout "
          f"{args.command_timeout_ms} ms; slow: over 2x the healthy p99 ({bound * 1000:.1f} ms)\n")
    print("| phase | requests | req/s | 200 | failed | stalled | p50 ms | p99 ms | max ms | slow |"
          " store at the end |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for phase in PHASES:
        rows = load.results[phase]
        times = sorted(s for s, _ in rows)
        good = sum(1 for _, o in rows if o == 200)
        stalled = sum(1 for _, o in rows if o == "stalled")
        failed = len(rows) - good - stalled
        slow = sum(1 for s in times if s > bound)
        outage = outages[phase]
        if outage == "unknown":
            store = "not reported"
        else:
            store = "reachable" if outage is None else f"outage, {outage['refused_calls']} refused"
        ok = ok and failed == 0 and stalled == 0 and len(rows) > 0
        print(f"| {phase} | {len(rows)} | {len(rows) / args.phase_seconds:.0f} | {good} | {failed}"
              f" | {stalled} | {statistics.median(times) * 1000:.2f} |"
              f" {percentile(times, 0.99) * 1000:.2f} | {times[-1] * 1000:.1f} | {slow} |"
              f" {store} |")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
