#!/usr/bin/env python3
"""The edge's structured output, embeddings and concurrent chats, side by side with llama-server.

Each server runs alone (never two model processes at once), on the same model and threads, and
the same requests go to both:

  structured   decode tokens/s of a streamed greedy answer, unconstrained and constrained by a
               JSON schema (response_format json_schema), measured at the client from the
               first to the last content chunk;
  embeddings   inputs embedded per second: --embed-requests requests of 16 short texts
               (llama-server with --embeddings --pooling mean, Tandem's default for a model
               that declares no pooling);
  concurrent   4 chats of 4 turns at once (Tandem edge.parallel 4, llama-server -np 4): total
               completion tokens/s and the median time to first token.

Usage: bench/edge_features.py [--model GGUF] [--threads 1] [--rounds 3] [--out results.json]
"""

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from local_servers import MODEL, TANDEM, free_port, llama_server_binary, stream_chat, wait_ready

SCHEMA = {"type": "object",
          "properties": {"title": {"type": "string", "maxLength": 40},
                         "story": {"type": "string"}},
          "required": ["title", "story"], "additionalProperties": False}
TEXTS = ["The cat sat on the mat.", "A dog ran in the park.", "Lily had a red ball.",
         "The sun was warm and bright.", "Tom found a shiny stone.", "The bird sang a song.",
         "Mom baked a big cake.", "The boat sailed on the lake."]


class Server:
    """A server process, started on enter and stopped on exit."""

    def __init__(self, name, argv, port, model_name):
        self.name, self.argv, self.port, self.model = name, argv, port, model_name

    def __enter__(self):
        self.process = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        wait_ready(self.port, self.process)
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=30)

    def post(self, path, body):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        conn.request("POST", path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        response = conn.getresponse()
        payload = response.read()
        conn.close()
        if response.status != 200:
            raise SystemExit(f"{self.name} {path}: HTTP {response.status}: {payload[:300]!r}")
        return json.loads(payload)

    def stream(self, body):
        """(ttft_s, decode tokens/s, completion tokens, text) of a streamed chat completion."""
        answer = stream_chat(self.port, dict(body, model=self.model))
        return answer.first, answer.decode_rate(), answer.completion_tokens, answer.text


def tandem_server(args, workdir, parallel):
    port = free_port()
    config = os.path.join(workdir, f"tandem-{parallel}.yaml")
    with open(config, "w") as f:
        f.write(f"server: {{host: 127.0.0.1, port: {port}}}\n"
                f"edge:\n  model: {args.model}\n  threads: {args.threads}\n  context: 2048\n"
                f"  parallel: {parallel}\n")
    return Server("tandem", [TANDEM, "serve", "-c", config], port, "tandem")


def llama_server(args, parallel, embeddings=False):
    port = free_port()
    argv = [llama_server_binary(), "-m", args.model, "--host", "127.0.0.1", "--port", str(port),
            "-t", str(args.threads), "-tb", str(args.threads), "-c", str(2048 * parallel),
            "-np", str(parallel), "--no-webui", "--log-disable"]
    if embeddings:
        argv += ["--embeddings", "--pooling", "mean", "-ub", "512", "-b", "512"]
    return Server("llama-server", argv, port, "model")


def structured(server, rounds):
    prompt = {"messages": [{"role": "user", "content": "Tell me a story about a cat."}],
              "max_tokens": 160, "temperature": 0}
    plain, constrained = [], []
    for _ in range(rounds):
        plain.append(server.stream(prompt)[1])
        _, rate, _, text = server.stream(dict(prompt, response_format={
            "type": "json_schema", "json_schema": {"name": "story", "schema": SCHEMA}}))
        constrained.append(rate)
    return {"unconstrained_tok_s": statistics.median(r for r in plain if r),
            "json_schema_tok_s": statistics.median(r for r in constrained if r)}


def embeddings(server, requests):
    inputs = [TEXTS[i % len(TEXTS)] + f" ({i})" for i in range(16)]
    server.post("/v1/embeddings", {"model": server.model, "input": inputs[:2]})  # warm-up
    started = time.perf_counter()
    for _ in range(requests):
        answer = server.post("/v1/embeddings", {"model": server.model, "input": inputs,
                                                "encoding_format": "float"})
        assert len(answer["data"]) == len(inputs)
    return {"inputs_per_s": requests * len(inputs) / (time.perf_counter() - started)}


def concurrent(server, turns=4, chats=4):
    ttfts, tokens = [], []
    lock = threading.Lock()

    def chat(index):
        messages = [{"role": "user", "content": TEXTS[index]}]
        for _ in range(turns):
            ttft, _, n, text = server.stream({"messages": messages, "max_tokens": 48,
                                              "temperature": 0})
            with lock:
                ttfts.append(ttft)
                tokens.append(n)
            messages += [{"role": "assistant", "content": text},
                         {"role": "user", "content": "What happened next?"}]

    started = time.perf_counter()
    workers = [threading.Thread(target=chat, args=(i,)) for i in range(chats)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    return {"tokens_per_s": sum(tokens) / elapsed,
            "median_ttft_ms": 1000 * statistics.median(t for t in ttfts if t is not None)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embed-requests", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args()
    args.model = os.path.abspath(args.model)

    results = {"tandem": {}, "llama-server": {}}
    with tempfile.TemporaryDirectory() as workdir:
        with tandem_server(args, workdir, 1) as s:
            results["tandem"].update(structured(s, args.rounds))
            results["tandem"].update(embeddings(s, args.embed_requests))
        with llama_server(args, 1) as s:
            results["llama-server"].update(structured(s, args.rounds))
        with llama_server(args, 1, embeddings=True) as s:
            results["llama-server"].update(embeddings(s, args.embed_requests))
        with tandem_server(args, workdir, 4) as s:
            results["tandem"]["concurrent"] = concurrent(s)
        with llama_server(args, 4) as s:
            results["llama-server"]["concurrent"] = concurrent(s)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    t, l = results["tandem"], results["llama-server"]
    print(f"model {os.path.basename(args.model)}, {args.threads} thread(s)")
    print(f"{'':34}{'tandem':>12}{'llama-server':>14}{'ratio':>8}")
    rows = [("decode tok/s, unconstrained", t["unconstrained_tok_s"], l["unconstrained_tok_s"]),
            ("decode tok/s, json_schema", t["json_schema_tok_s"], l["json_schema_tok_s"]),
            ("embeddings, inputs/s", t["inputs_per_s"], l["inputs_per_s"]),
            ("4 chats: completion tok/s", t["concurrent"]["tokens_per_s"],
             l["concurrent"]["tokens_per_s"]),
            ("4 chats: median TTFT ms", t["concurrent"]["median_ttft_ms"],
             l["concurrent"]["median_ttft_ms"])]
    for name, a, b in rows:
        print(f"{name:34}{a:>12.1f}{b:>14.1f}{a / b:>8.2f}")


if __name__ == "__main__":
    sys.exit(main())
