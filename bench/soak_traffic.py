"""The traffic of the soak (bench/soak_driver.py): request kinds, each a function that sends
one request (or one small exchange) on a Client and returns its Outcome.

Kinds here: answered by the edge, routed (`model: tandem`), private data pinned to the edge,
the healthy cloud, the faulty cloud upstreams, clients that leave mid-stream or before the
response, malformed requests with their exact documented 4xx, operator endpoints, and a burst
of streams beyond the per-key limit. The review queue's kinds are in soak_reviews.py; the
driver's KINDS table weighs them all.
"""
import json
import random
import threading
import time

import soak_gateway as gw
from soak_http import Connection, HttpError, SseReader
from soak_judge import Verdict, error_verdict, judge_completion, StreamJudge, unexpected

SIMPLE_PROMPTS = ["Once upon a time", "The little dog ran to the park and", "Lily had a red ball.",
                  "Tom and his mom went to the store", "The sun was hot, so the cat"]
HARD_PROMPTS = [
    "Prove that the square root of 2 is irrational, step by step.",
    "Write a Python function that merges overlapping intervals and explain its complexity.",
    "Compare the economic policies of Keynes and Hayek and their effect on inflation.",
    "Derive the closed form of the sum of the first n squares and prove it by induction.",
]
PRIVATE_PROMPTS = ["My e-mail is alice.smith@example.com, write me a story.",
                   "Card 4111 1111 1111 1111 was charged twice, what now?"]
PATTERNS = ["", "", "", "cascade", "speculative", "collaborate", "edge", "cloud"]
CLIENTS = ["", "alice", "bob", "carol"]


class Outcome:
    """One request: its kind, when it ran and how it was judged."""

    def __init__(self, kind, started, verdict=None, sub="", stream=False):
        self.kind = kind
        self.sub = sub  # e.g. the fault model asked for
        self.stream = stream
        self.started = started
        self.finished = time.monotonic()
        self.category = verdict.category if verdict else "disconnect"
        self.detail = verdict.detail if verdict else "client left"
        self.request_id = verdict.request_id if verdict else None
        self.tier = verdict.tier if verdict else None
        self.transport_error = False


class Client:
    """One worker's connection, random source and shared state."""

    def __init__(self, port, seed, tickets, max_tokens, features, timeout=30):
        self.conn = Connection("127.0.0.1", port, timeout)
        self.features = features  # the optional config keys this build knows
        self.rng = random.Random(seed)
        self.tickets = tickets
        self.max_tokens = max_tokens

    def headers(self, key=gw.CLIENT_KEY, extra=None):
        h = {"Content-Type": "application/json"}
        if key:
            h["Authorization"] = f"Bearer {key}"
        h.update(extra or {})
        return h

    def body(self, model, prompt, stream, chat=True, **fields):
        body = {"model": model, "max_tokens": self.rng.randint(4, self.max_tokens),
                "stream": stream}
        if chat:
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if stream and self.rng.random() < 0.5:
            body["stream_options"] = {"include_usage": True}
        body.update(fields)
        return body


# --- sending and judging one completion --------------------------------------------------------
def completion(c, kind, model, body, extra_headers=None, sub=""):
    """Sends a completion request and judges the whole response."""
    path = "/v1/chat/completions" if "messages" in body else "/v1/completions"
    started = time.monotonic()
    payload = json.dumps(body).encode()
    headers = c.headers(extra=extra_headers)
    try:
        if not body.get("stream"):
            response = c.conn.request("POST", path, headers, payload)
            verdict = judge_completion(response, model, gw.CLOUD_MODELS)
        else:
            verdict = stream_completion(c, path, headers, payload, model)
    except HttpError as e:
        c.conn.close()
        outcome = Outcome(kind, started, unexpected(f"transport: {e}"), sub, body.get("stream"))
        outcome.transport_error = True
        return outcome
    if verdict.ticket:
        c.tickets.created(verdict.ticket)
    return Outcome(kind, started, verdict, sub, body.get("stream"))


def stream_completion(c, path, headers, payload, model):
    c.conn.send("POST", path, headers, payload)
    try:
        verdict = stream_completion_on(c.conn, model)
    except HttpError:
        c.conn.close()
        raise
    return verdict


# --- the kinds ---------------------------------------------------------------------------------
def edge_request(c):
    chat = c.rng.random() < 0.7
    stream = c.rng.random() < 0.5
    body = c.body(gw.EDGE_MODEL, c.rng.choice(SIMPLE_PROMPTS), stream, chat)
    return completion(c, "edge", gw.EDGE_MODEL, body)


def routed_request(c):
    prompt = c.rng.choice(SIMPLE_PROMPTS + HARD_PROMPTS)
    headers = {}
    pattern = c.rng.choice(PATTERNS)
    if pattern:
        headers["X-Tandem-Pattern"] = pattern
    client = c.rng.choice(CLIENTS)
    if client:
        headers["X-Tandem-Client"] = client
    if c.rng.random() < 0.1:
        headers["X-Tandem-Latency-Budget-Ms"] = "100"
    body = c.body(gw.ROUTED_MODEL, prompt, c.rng.random() < 0.5, c.rng.random() < 0.8)
    return completion(c, "routed", gw.ROUTED_MODEL, body, headers, sub=pattern or "ingress")


def private_request(c):
    model = c.rng.choice([gw.ROUTED_MODEL, "cloud-ok"])
    body = c.body(model, c.rng.choice(PRIVATE_PROMPTS), c.rng.random() < 0.5)
    return completion(c, "private", model, body)


def cloud_ok_request(c):
    model = c.rng.choice(["cloud-ok", "cloud-ok", "cloud-slow"])
    body = c.body(model, c.rng.choice(HARD_PROMPTS), c.rng.random() < 0.5, c.rng.random() < 0.7)
    return completion(c, "cloud_ok", model, body, sub=model)


def cloud_fault_request(c):
    model = c.rng.choice(gw.FAULT_MODELS)
    fields = {}
    if c.rng.random() < 0.15:  # a cloud-only field: no fallback to the edge (502)
        fields["response_format"] = {"type": "text"}
    body = c.body(model, c.rng.choice(SIMPLE_PROMPTS), c.rng.random() < 0.5,
                  c.rng.random() < 0.7, **fields)
    sub = model + (" cloud-only" if fields else "")
    return completion(c, "cloud_fault", model, body, sub=sub)


def disconnect_mid_stream(c):
    """Reads the response head and one SSE event, then closes the socket."""
    model = c.rng.choice([gw.EDGE_MODEL, "cloud-slow", gw.ROUTED_MODEL, "cloud-reset-mid"])
    body = c.body(model, c.rng.choice(SIMPLE_PROMPTS), True, max_tokens=64)
    started = time.monotonic()
    try:
        c.conn.open()  # a fresh connection: it will be dropped
        c.conn.send("POST", "/v1/chat/completions", c.headers(), json.dumps(body).encode())
        response = c.conn.read_head()
        if response.status != 200:
            response.body = b"".join(c.conn.body_pieces(response))
            verdict = error_verdict(response.status, response.body)
            c.conn.close()
            return Outcome("disconnect_mid_stream", started, verdict, model, True)
        next(SseReader(c.conn.body_pieces(response)).events())
    except (HttpError, StopIteration) as e:
        c.conn.close()
        outcome = Outcome("disconnect_mid_stream", started, unexpected(f"transport: {e}"),
                          model, True)
        outcome.transport_error = True
        return outcome
    c.conn.abort() if c.rng.random() < 0.5 else c.conn.close()
    return Outcome("disconnect_mid_stream", started, None, model, True)


def disconnect_early(c):
    """Sends a request (sometimes only half its body) and closes before any response byte."""
    model = c.rng.choice(["cloud-hang", "cloud-slow", gw.EDGE_MODEL, gw.ROUTED_MODEL])
    stream = c.rng.random() < 0.5
    body = c.body(model, c.rng.choice(SIMPLE_PROMPTS), stream, max_tokens=64)
    partial = c.rng.random() < 0.25
    started = time.monotonic()
    try:
        c.conn.open()
        c.conn.send("POST", "/v1/chat/completions", c.headers(), json.dumps(body).encode(),
                    partial=partial)
    except HttpError as e:
        outcome = Outcome("disconnect_early", started, unexpected(f"transport: {e}"), model)
        outcome.transport_error = True
        return outcome
    time.sleep(c.rng.uniform(0, 0.05))
    c.conn.abort() if c.rng.random() < 0.5 else c.conn.close()
    return Outcome("disconnect_early", started, None, model + (" half body" if partial else ""),
                   stream)


def malformed_cases(c):
    """(name, method, path, headers, body, expected status, expected code, expected param)."""
    chat = {"model": gw.EDGE_MODEL, "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 4}
    big = dict(chat, messages=[{"role": "user", "content": "x" * (gw.MAX_BODY_BYTES + 1024)}])
    ok_json = json.dumps(chat).encode()
    post = ("POST", "/v1/chat/completions")
    cases = [
        ("bad json", *post, c.headers(), b'{"model": "stories", ', 400, None, "any"),
        ("bad field", *post, c.headers(), json.dumps(dict(chat, max_tokens="many")).encode(),
         400, None, "max_tokens"),
        ("no messages", *post, c.headers(), json.dumps({"model": gw.EDGE_MODEL}).encode(),
         400, None, "messages"),
        ("bad routing header", *post, c.headers(extra={"X-Tandem-Pattern": "fastest"}),
         json.dumps(dict(chat, model=gw.ROUTED_MODEL)).encode(), 400, None, "X-Tandem-Pattern"),
        ("oversized body", *post, c.headers(), json.dumps(big).encode(), 413, None, "any"),
        ("missing key", *post, c.headers(key=None), ok_json, 401, "invalid_api_key", "any"),
        ("wrong key", *post, c.headers(key="not-a-key"), ok_json, 401, "invalid_api_key", "any"),
        ("unknown model", *post, c.headers(), json.dumps(dict(chat, model="gpt-17")).encode(),
         404, "model_not_found", "any"),
        ("wrong method", "GET", "/v1/chat/completions", c.headers(), None, 405, None, "any"),
        ("no such endpoint", "GET", "/v1/nothing-here", c.headers(), None, 404, None, "any"),
        ("client key on /metrics", "GET", "/metrics", c.headers(), None, 403, "any", "any"),
        ("client key lists reviews", "GET", "/v1/tandem/reviews", c.headers(), None, 403, "any",
         "any"),
    ]
    if c.features.get("limits"):
        too_many = [{"role": "user", "content": "hi"}] * (gw.MAX_MESSAGES + 1)
        cases += [
            ("max_tokens over server.limits", *post, c.headers(),
             json.dumps(dict(chat, max_tokens=gw.MAX_TOKENS + 1)).encode(), 400, "any",
             "max_tokens"),
            ("messages over server.limits", *post, c.headers(),
             json.dumps(dict(chat, messages=too_many)).encode(), 400, "any", "messages"),
        ]
    return cases


def malformed_request(c):
    name, method, path, headers, body, status, code, param = c.rng.choice(malformed_cases(c))
    started = time.monotonic()
    try:
        response = c.conn.request(method, path, headers, body)
    except HttpError as e:
        outcome = Outcome("malformed", started, unexpected(f"transport: {e}"), name)
        outcome.transport_error = True
        return outcome
    verdict = error_verdict(response.status, response.body, status, code, param)
    if verdict.category == "documented":
        verdict.detail = f"{name}: {verdict.detail}"
    return Outcome("malformed", started, verdict, name)


BURST_LOCK = threading.Lock()  # one burst at a time: the key's slots are all free before it


def stream_burst(c):
    """With server.limits: one key opens max_streams_per_key + 1 slow streams at once; each
    must be a whole stream or 429 too_many_streams, at least one refused and nearly all the
    others streamed (a slot that was never given back would show here)."""
    if not c.features.get("limits") or not BURST_LOCK.acquire(blocking=False):
        return ops_request(c)
    try:
        return burst_of_streams(c)
    finally:
        BURST_LOCK.release()


def burst_of_streams(c):
    started = time.monotonic()
    body = json.dumps({"model": "cloud-slow", "stream": True, "max_tokens": 25,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    conns = [Connection(c.conn.host, c.conn.port, c.conn.timeout)
             for _ in range(gw.MAX_STREAMS_PER_KEY + 1)]
    verdicts = []
    try:
        for conn in conns:
            conn.send("POST", "/v1/chat/completions", c.headers(gw.BURST_KEY), body)
        for conn in conns:
            verdicts.append(stream_completion_on(conn, "cloud-slow"))
    except HttpError as e:
        outcome = Outcome("stream_burst", started, unexpected(f"transport: {e}"), "burst", True)
        outcome.transport_error = True
        return outcome
    finally:
        for conn in conns:
            conn.close()
    bad = [v for v in verdicts if v.category == "unexpected"]
    refused = [v for v in verdicts if v.detail == "429 too_many_streams"]
    if bad:
        return Outcome("stream_burst", started, bad[0], "burst", True)
    # A slot is given back just after the stream's last byte: a burst right after the last
    # may find one or two still held.
    if not refused or len(verdicts) - len(refused) < gw.MAX_STREAMS_PER_KEY - 2:
        return Outcome("stream_burst", started, unexpected(
            f"{len(conns)} streams of one key at once: {len(refused)} refused, "
            f"max_streams_per_key {gw.MAX_STREAMS_PER_KEY}: {[v.detail for v in verdicts]}"),
            "burst", True)
    return Outcome("stream_burst", started,
                   Verdict("documented", f"{len(verdicts) - len(refused)} streamed, "
                           f"{len(refused)} refused 429"), "burst", True)


def stream_completion_on(conn, model):
    """Reads and judges one streaming response on a connection whose request was sent."""
    response = conn.read_head()
    if response.status != 200:
        response.body = b"".join(conn.body_pieces(response))
        conn.finish(response)
        return error_verdict(response.status, response.body)
    if not response.header("content-type").startswith("text/event-stream"):
        conn.close()
        return unexpected(f"stream with Content-Type {response.header('content-type')}")
    judge = StreamJudge(model, gw.CLOUD_MODELS, response.header("x-tandem-tier"))
    reader = SseReader(conn.body_pieces(response))
    for name, data in reader.events():
        judge.feed(name, data)
    conn.finish(response)  # the connection stays open for the next request unless it closes
    return judge.verdict(reader.leftover())


def ops_request(c):
    path, key, method, body = c.rng.choice([
        ("/health", None, "GET", None),
        ("/metrics", gw.ADMIN_KEY, "GET", None),
        ("/v1/tandem/status", gw.ADMIN_KEY, "GET", None),
        ("/v1/models", gw.CLIENT_KEY, "GET", None),
        ("/v1/tandem/route", gw.CLIENT_KEY, "POST",
         json.dumps({"model": "tandem", "messages": [{"role": "user", "content": "hi"}]})),
    ])
    started = time.monotonic()
    try:
        response = c.conn.request(method, path, c.headers(key),
                                  body.encode() if body else None)
    except HttpError as e:
        outcome = Outcome("ops", started, unexpected(f"transport: {e}"), path)
        outcome.transport_error = True
        return outcome
    if response.status != 200:
        return Outcome("ops", started, error_verdict(response.status, response.body), path)
    if path == "/metrics" and b"# TYPE tandem_" not in response.body:
        return Outcome("ops", started, unexpected("/metrics without tandem_ families"), path)
    if path != "/metrics":
        try:
            json.loads(response.body)
        except ValueError:
            return Outcome("ops", started, unexpected(f"{path}: not JSON"), path)
    return Outcome("ops", started, Verdict("ok", path), path)
