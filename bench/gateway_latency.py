#!/usr/bin/env python3
"""Sequential request latency of several HTTP targets, interleaved in rounds.

    gateway_latency.py --target NAME=PORT:MODEL[:stream] [--target ...] [--rounds 5] [--requests 400]
                       [--warmup 200] [--out raw.json]

Each target gets one persistent keep-alive connection (http.client) for the whole run. Every
round sends --requests identical requests (POST /v1/chat/completions, non-streaming, max_tokens
4) to each target in turn, one after another, and times each from just before the request is
written to just after the whole body is read (time.perf_counter_ns). The order of the targets
rotates from round to round so none is always first after a pause. A target spec ending in
`:stream` asks for "stream": true and reads the whole SSE body. A request that fails (not
200, or the connection drops) is counted, the connection is reopened, and its time is dropped.

Prints one JSON object: per target and round, p50/p90/p99 in microseconds, the count of good
requests and errors; --out also keeps every sample.
"""
import argparse
import http.client
import json
import sys
import time


def percentile(sorted_values, fraction):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return None
    rank = max(1, int(-(-fraction * len(sorted_values) // 1)))  # ceil
    return sorted_values[min(rank, len(sorted_values)) - 1]


class Target:
    def __init__(self, spec):
        name, _, rest = spec.partition("=")
        port, _, model = rest.partition(":")
        model, _, mode = model.partition(":")
        if not name or not port or not model or mode not in ("", "stream"):
            raise SystemExit(f"bad --target {spec!r}: want NAME=PORT:MODEL[:stream]")
        self.name = name
        self.port = int(port)
        body = {
            "model": model,
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 4,
        }
        if mode == "stream":
            body["stream"] = True
        self.body = json.dumps(body).encode()
        self.headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
        self.conn = None
        self.reconnects = 0

    def connect(self):
        if self.conn is not None:
            self.conn.close()
            self.reconnects += 1
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.conn.connect()

    def one(self):
        """Returns the request's time in ns, or None when it failed."""
        if self.conn is None:
            self.connect()
        started = time.perf_counter_ns()
        try:
            self.conn.request("POST", "/v1/chat/completions", self.body, self.headers)
            response = self.conn.getresponse()
            payload = response.read()
            elapsed = time.perf_counter_ns() - started
        except (OSError, http.client.HTTPException):
            self.connect()
            return None
        if response.status != 200 or not payload:
            return None
        if response.will_close:
            self.connect()
        return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    targets = [Target(spec) for spec in args.target]

    for target in targets:
        for _ in range(args.warmup):
            target.one()

    result = {"rounds": args.rounds, "requests_per_round": args.requests, "targets": {}}
    samples = {t.name: [] for t in targets}
    for t in targets:
        result["targets"][t.name] = {"rounds": [], "errors": 0}
    for round_index in range(args.rounds):
        shift = round_index % len(targets)
        for target in targets[shift:] + targets[:shift]:
            times = []
            errors = 0
            for _ in range(args.requests):
                elapsed = target.one()
                if elapsed is None:
                    errors += 1
                else:
                    times.append(elapsed)
            samples[target.name].append(times)
            ordered = sorted(times)
            result["targets"][target.name]["rounds"].append({
                "round": round_index + 1,
                "ok": len(times),
                "errors": errors,
                "p50_us": percentile(ordered, 0.50) / 1000 if ordered else None,
                "p90_us": percentile(ordered, 0.90) / 1000 if ordered else None,
                "p99_us": percentile(ordered, 0.99) / 1000 if ordered else None,
                "mean_us": sum(ordered) / len(ordered) / 1000 if ordered else None,
            })
            result["targets"][target.name]["errors"] += errors
    for target in targets:
        pooled = sorted(x for times in samples[target.name] for x in times)
        entry = result["targets"][target.name]
        entry["reconnects"] = target.reconnects
        entry["pooled"] = {
            "ok": len(pooled),
            "p50_us": percentile(pooled, 0.50) / 1000 if pooled else None,
            "p90_us": percentile(pooled, 0.90) / 1000 if pooled else None,
            "p99_us": percentile(pooled, 0.99) / 1000 if pooled else None,
        }
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"summary": result, "samples_ns": samples}, f)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
