#!/usr/bin/env python3
"""A load-and-fault soak of `tandem serve` on loopback. Normally run through bench/soak.sh:

    bench/soak.sh [--duration 600] [--concurrency 8] [--out soak.json] [--seed 1]

What it does, in order (docs/RELIABILITY.md, "Load and soak", has a full run's figures):
 1. starts tests/support/fault_upstream and `tandem serve` with a generated configuration in a
    temporary directory (soak_gateway.py): the edge on models/stories260K.gguf, one cloud
    upstream per fault mode (500, 503, 429, reset, reset mid-stream, malformed SSE, wrong
    Content-Type, hang, slow), routing on, the review queue and traces in a SQLite file, two
    client keys and an admin key, and server.limits where the build knows them;
 2. warms up, waits until the gateway is quiet (snapshot: no open connection, descriptors and
    threads unchanged for --quiet seconds) and takes its baseline: fds by kind, threads, TCP
    connections by role and state (/proc/PID/fd + /proc/net/tcp*), RSS;
 3. drives the KINDS mix below (soak_traffic.py, soak_reviews.py) from --concurrency threads
    for most of --duration, sampling the resources every --sample-interval seconds, and judges
    every response (soak_judge.py): a success, an error docs/GATEWAY.md documents (exactly the
    one expected, for malformed requests), or "unexpected";
 4. stops, waits for quiet again, and compares the resources with the baseline, descriptor
    kind by kind (any extra one fails, and is named); fits RSS over the
    second half of the load (least squares) and compares the slope with --max-rss-slope;
 5. resumes the traffic for the rest of --duration (10 %, 8..60 s), kill -9s the gateway 40 %
    into it, restarts it on the same database, and checks (soak_recovery.py) review tickets,
    routing traces, PRAGMA integrity_check, and that the restarted gateway answers;
 6. prints a summary, writes it as JSON (--out), and exits 1 if any verdict failed
    (2 if the soak could not be set up).
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import soak_gateway as gw  # noqa: E402
import soak_recovery  # noqa: E402
import soak_report  # noqa: E402
import soak_reviews as reviews  # noqa: E402
import soak_traffic as traffic  # noqa: E402
from soak_judge import unexpected  # noqa: E402

# The traffic mix: kind -> (weight, function). Each function sends one request (or one small
# exchange) on a Client and returns an Outcome (soak_traffic.py, soak_reviews.py).
KINDS = {
    "edge": (18, traffic.edge_request),
    "routed": (18, traffic.routed_request),
    "private": (3, traffic.private_request),
    "cloud_ok": (10, traffic.cloud_ok_request),
    "cloud_fault": (16, traffic.cloud_fault_request),
    "disconnect_mid_stream": (5, traffic.disconnect_mid_stream),
    "disconnect_early": (4, traffic.disconnect_early),
    "malformed": (8, traffic.malformed_request),
    "review_create": (3, reviews.review_create),
    "review_work": (2, reviews.review_work),
    "ops": (3, traffic.ops_request),
    "stream_burst": (0.3, traffic.stream_burst),
}


def pick_kind(rng):
    names = list(KINDS)
    return rng.choices(names, weights=[KINDS[n][0] for n in names])[0]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tandem", required=True, help="the tandem binary")
    p.add_argument("--fault-upstream", required=True, help="the fault_upstream binary")
    p.add_argument("--model", required=True, help="the edge GGUF (models/stories260K.gguf)")
    p.add_argument("--workdir", required=True, help="an empty directory for config, db, logs")
    p.add_argument("--duration", type=float, default=600, help="seconds of load (default 600)")
    p.add_argument("--concurrency", type=int, default=8, help="client threads (default 8)")
    p.add_argument("--warmup", type=float, default=None, help="seconds (default 3%%, 3..15)")
    p.add_argument("--quiet", type=float, default=3,
                   help="seconds without a change in the gateway's descriptors and threads, and"
                   " without an open connection, before its resources count (default 3)")
    p.add_argument("--settle-timeout", type=float, default=60,
                   help="seconds to wait for that quiet at most; not settling fails (default 60)")
    p.add_argument("--sample-interval", type=float, default=5)
    p.add_argument("--max-tokens", type=int, default=24, help="largest max_tokens sent")
    p.add_argument("--max-rss-slope", type=float, default=1.0, help="MiB/min (default 1)")
    p.add_argument("--min-slope-span", type=float, default=120,
                   help="seconds the RSS fit must span to be judged (default 120)")
    p.add_argument("--fd-tolerance", type=int, default=0,
                   help="descriptors (not upstream connections) the quiet gateway may hold"
                   " beyond its quiet baseline (default 0)")
    p.add_argument("--thread-tolerance", type=int, default=0)
    p.add_argument("--trace-margin", type=float, default=2.0,
                   help="requests finished this long before the kill must have a trace")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", help="write the summary as JSON here")
    return p.parse_args()


class Recorder:
    """Every outcome, tagged with the phase it finished in. Thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = []
        self.phase = "warmup"

    def add(self, outcome):
        with self.lock:
            outcome.phase = self.phase
            self.outcomes.append(outcome)

    def set_phase(self, phase):
        with self.lock:
            self.phase = phase


class Load:
    """--concurrency worker threads sending KINDS until stopped."""

    def __init__(self, port, args, tickets, recorder, round_no):
        self.stop_event = threading.Event()
        self.threads = []
        for i in range(args.concurrency):
            client = traffic.Client(port, args.seed * 1000 + round_no * 100 + i, tickets,
                                    args.max_tokens, args.features)
            t = threading.Thread(target=self.work, args=(client, recorder), daemon=True)
            self.threads.append(t)
            t.start()

    def work(self, client, recorder):
        while not self.stop_event.is_set():
            kind = pick_kind(client.rng)
            started = time.monotonic()
            try:
                outcome = KINDS[kind][1](client)
            except Exception as e:  # a bug in the driver must show, not hide as a gateway fault
                outcome = traffic.Outcome(kind, started, unexpected(f"driver exception: {e!r}"))
                outcome.category = "driver_error"
                client.conn.close()
            recorder.add(outcome)
            if outcome.transport_error:
                time.sleep(0.1)  # the gateway is down (our kill -9): do not spin
            if client.rng.random() < 0.03:
                client.conn.close()  # a fresh connection now and then
        client.conn.close()

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join(60)


class Sampler:
    """Samples the gateway's resources every interval, on a thread, while it runs."""

    def __init__(self, gateway, upstream_port, interval, tag):
        self.gateway = gateway
        self.upstream_port = upstream_port
        self.interval = interval
        self.tag = tag
        self.samples = []
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop_event.wait(self.interval):
            s = gw.resources(self.gateway.pid, self.gateway.port, self.upstream_port)
            if s is not None:
                s["phase"] = self.tag
                self.samples.append(s)

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def run_load(gateway, upstream, args, tickets, recorder, seconds, round_no, sample=True):
    load = Load(gateway.port, args, tickets, recorder, round_no)
    sampler = Sampler(gateway, upstream.port, args.sample_interval, recorder.phase) if sample \
        else None
    time.sleep(seconds)
    load.stop()
    if sampler is None:
        return []
    sampler.stop()
    return sampler.samples


def ensure_running(gateway):
    """A gateway that died on its own is recorded (a failed verdict) and started again, so
    the rest of the soak can still run."""
    gateway.note_exit()
    if not gateway.alive():
        print(f"soak: the gateway died on its own: {gateway.history[-1]}\n"
              f"{gw.tail(gateway.log)}", file=sys.stderr, flush=True)
        gateway.start()


def crash_phase(gateway, upstream, args, tickets, recorder, seconds, round_no):
    """Traffic for `seconds`; kill -9 at 40 % of it, restart, traffic on to the end."""
    recorder.set_phase("crash")
    load = Load(gateway.port, args, tickets, recorder, round_no)
    time.sleep(seconds * 0.4)
    ensure_running(gateway)
    crash = {"killed_pid": gateway.pid}
    crash["kill_t"] = time.monotonic()
    crash["kill_unix_ms"] = int(time.time() * 1000)
    gateway.kill9()
    crash["db_after_kill"] = soak_recovery.integrity_of_copy(args.workdir)
    crash["restarted_pid"] = gateway.start()
    crash["ready_t"] = time.monotonic()
    crash["restart_s"] = round(crash["ready_t"] - crash["kill_t"], 2)
    recorder.set_phase("after_restart")
    time.sleep(max(0.0, seconds * 0.6 - crash["restart_s"]))
    load.stop()
    return crash


def classify_crash_window(outcomes, crash, grace=2.0):
    """Transport failures of requests in flight across the kill, or sent while the gateway
    was down, are the kill's doing: they are counted apart, not as unexpected."""
    start, end = crash["kill_t"], crash["ready_t"] + grace
    n = 0
    for o in outcomes:
        if o.category == "unexpected" and o.transport_error and o.started <= end and \
                o.finished >= start:
            o.category = "crash_window"
            n += 1
    return n


def snapshot(gateway, upstream, args):
    """The gateway's resources once it is quiet: no client connection open, no stream open at
    fault_upstream, and neither its own descriptors (by kind) nor its threads changed for
    --quiet seconds. Connections still closing (a session that has not seen its client leave
    yet, a cancelled upstream request unwinding) are waited for, not counted: on a loaded
    machine or under a sanitizer that takes seconds. Waits at most --settle-timeout seconds;
    the sample says whether it settled and how long that took."""
    started = time.monotonic()
    last, stable_since, first_look = None, started, None
    while True:
        res = gw.resources(gateway.pid, gateway.port, upstream.port)
        if res is None:
            raise RuntimeError("the gateway exited while the soak waited for it to be quiet")
        stats = upstream.stats()
        now = time.monotonic()
        idle = res["client_connections"] == 0 and stats.get("active_streams", 0) == 0
        changed = last is None or gw.own_kinds(res) != gw.own_kinds(last) or \
            res["threads"] != last["threads"]
        if changed or not idle:
            stable_since = now
        last = res
        if first_look is None and now - started >= args.quiet:
            # What a fixed sleep of --quiet seconds would have judged.
            first_look = {k: res[k] for k in ("fd_kinds", "client_connections", "threads")}
            first_look["active_streams"] = stats.get("active_streams", 0)
        settled = idle and now - stable_since >= args.quiet
        if settled or now - started >= args.settle_timeout:
            break
        time.sleep(0.1)
    last["upstream_stats"] = stats
    last["settle"] = {"settled": settled, "waited_s": round(now - started, 2),
                      "after_quiet_s": first_look}
    return last


def durations(args):
    warmup = args.warmup if args.warmup is not None else min(15.0, max(3.0, args.duration * 0.03))
    tail = min(60.0, max(8.0, args.duration * 0.1))
    return warmup, max(5.0, args.duration - tail), tail


def soak(args, upstream, gateway):
    tickets, recorder = reviews.Tickets(), Recorder()
    warmup, main_s, tail = durations(args)
    t0 = time.monotonic()
    run_load(gateway, upstream, args, tickets, recorder, warmup, 0, sample=False)
    baseline = snapshot(gateway, upstream, args)
    recorder.set_phase("main")
    main_started = time.monotonic()
    samples = run_load(gateway, upstream, args, tickets, recorder, main_s, 1)
    main_ended = time.monotonic()
    ensure_running(gateway)
    recorder.set_phase("quiet")
    after = snapshot(gateway, upstream, args)
    crash = crash_phase(gateway, upstream, args, tickets, recorder, tail, 2)
    crash["crash_window_requests"] = classify_crash_window(recorder.outcomes, crash)
    time.sleep(args.quiet)
    recovery = soak_recovery.verify(gateway, args, tickets.snapshot(), recorder.outcomes, crash)
    final = gw.resources(gateway.pid, gateway.port, upstream.port)
    final_stats = upstream.stats()
    gateway.stop()
    recovery["graceful_stop_exit"] = gateway.history[-1]["exit"]
    recovery["db_after_stop"] = soak_recovery.integrity(os.path.join(args.workdir, "tandem.db"))
    return {
        "timing": {"warmup_s": warmup, "main_s": round(main_ended - main_started, 1),
                   "crash_phase_s": tail, "total_s": round(time.monotonic() - t0, 1)},
        "baseline": baseline, "after": after, "samples": samples, "final": final,
        "final_upstream_stats": final_stats, "crash": crash, "recovery": recovery,
        "main_window": (main_started, main_ended),
        "outcomes": recorder.outcomes, "tickets": tickets.snapshot(),
        "gateway_history": gateway.history,
    }


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    upstream = gateway = None
    try:
        upstream = gw.FaultUpstream(args.fault_upstream, args.workdir)
        features = gw.probe_features(args.tandem, args.workdir, args.model, upstream.port)
        args.features = features
        config_path = os.path.join(args.workdir, "tandem.yaml")
        with open(config_path, "w") as f:
            f.write(gw.config_yaml(args.workdir, args.model, upstream.port, features))
        ok, message = gw.config_loads(args.tandem, config_path)
        if not ok:
            raise RuntimeError(f"the generated configuration does not load: {message}")
        gateway = gw.Gateway(args.tandem, config_path, args.workdir)
        gateway.start()
        print(f"soak: gateway pid {gateway.pid} on :{gateway.port}, fault_upstream on "
              f":{upstream.port}, {args.concurrency} clients, {args.duration:.0f} s; "
              f"features {features}; workdir {args.workdir}", file=sys.stderr, flush=True)
        run = soak(args, upstream, gateway)
    except RuntimeError as e:
        print(f"soak: could not run: {e}", file=sys.stderr)
        return 2
    finally:
        if gateway is not None:
            gateway.stop()
        if upstream is not None:
            upstream.stop()
    run["features"] = features
    summary = soak_report.summarise(run, args, gateway)
    soak_report.print_summary(summary)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
