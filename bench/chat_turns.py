#!/usr/bin/env python3
"""Time to first token at every turn of a growing chat: Tandem's edge vs llama-server.

Each server runs alone (never two model processes at once: they share the cores), on the same
model, one thread, the same context and slot count. A chat of --turns turns is played against
it: turn k sends the whole conversation so far plus a new user message (streaming, greedy,
--max-tokens), and the assistant's answer is appended to the history for the next turn. The
time to first token is measured at the client, from just before the request is written to the
first SSE chunk that carries content. Each server plays --chats chats (different openings) and
the median per turn is reported, with the prompt tokens the server counted and, for Tandem,
how many of them it found in its prompt cache.

Servers, all in one run:
  tandem          tandem serve, edge only, prompt cache on (the default)
  tandem-nocache  tandem serve with edge.prompt_cache: false (every turn prefills all of it)
  llama-server    llama.cpp's server at the same commit (keeps each slot's prompt cache too)

With --interleave the chats take turns (chat 1 turn 1, chat 2 turn 1, ..., chat 1 turn 2, ...)
so that with fewer slots than chats each turn finds its slot holding another conversation:
what the host-memory prompt store (edge.prompt_cache_mib) is for. The second Tandem then runs
with prompt_cache_mib: 0 (slots only) instead of no cache; llama-server keeps its own RAM
prompt cache (--cache-ram, on by default at this commit).

Usage: bench/chat_turns.py [--model GGUF] [--turns 12] [--chats 3] [--max-tokens 48]
                           [--parallel 1] [--context 4096] [--interleave] [--out results.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from local_servers import MODEL, TANDEM, free_port, llama_server_binary, stream_chat, wait_ready

OPENINGS = [
    "Once upon a time, there was a little girl named Lily who loved her red ball.",
    "Tom and his dog Max went to the park on a sunny day.",
    "A small bird lived in a big tree next to a river.",
]
FOLLOW_UPS = [
    "What happened next?",
    "Who did they meet?",
    "Why was that a surprise?",
    "Tell me more about the weather that day.",
    "What did they eat for lunch?",
    "How did everyone feel?",
    "What did mom say about it?",
    "Where did they go after that?",
    "What was the funniest part?",
    "Did anything go wrong?",
    "How did the day end?",
    "What did they learn?",
]


def start_tandem(args, port, prompt_cache, workdir, store_mib=256):
    config = os.path.join(workdir, f"tandem-{prompt_cache}-{store_mib}.yaml")
    with open(config, "w") as f:
        f.write(f"server: {{host: 127.0.0.1, port: {port}}}\n"
                f"edge:\n  model: {args.model}\n  threads: 1\n  context: {args.context}\n"
                f"  parallel: {args.parallel}\n  prompt_cache: {str(prompt_cache).lower()}\n"
                f"  prompt_cache_mib: {store_mib}\n"
                f"  default_max_tokens: {args.max_tokens}\n"
)
    process = subprocess.Popen([TANDEM, "serve", "-c", config], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    wait_ready(port, process, "/health")
    return process, "tandem"


def start_llama_server(args, port):
    process = subprocess.Popen(
        [llama_server_binary(), "-m", args.model, "--host", "127.0.0.1", "--port", str(port),
         "-t", "1", "-tb", "1", "-c", str(args.context * args.parallel), "-np",
         str(args.parallel), "--no-webui", "--log-disable"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(port, process, "/health")
    return process, "model"


def stream_turn(port, model, messages, max_tokens):
    """Returns (ttft_ms, answer text, usage dict) for one streamed chat completion."""
    answer = stream_chat(port, {"model": model, "messages": messages, "max_tokens": max_tokens,
                                "temperature": 0})
    ttft = answer.first * 1000.0 if answer.first is not None else None
    return ttft, answer.text, answer.usage


def play_turn(port, model, args, messages, turn):
    """Plays turn `turn` of the chat in `messages` (extended in place); returns its record."""
    ttft, answer, usage = stream_turn(port, model, messages, args.max_tokens)
    details = usage.get("prompt_tokens_details") or {}
    messages.append({"role": "assistant", "content": answer})
    messages.append({"role": "user", "content": FOLLOW_UPS[turn % len(FOLLOW_UPS)]})
    return {"turn": turn + 1, "ttft_ms": ttft, "prompt_tokens": usage.get("prompt_tokens"),
            "cached_tokens": details.get("cached_tokens")}


def play_chats(port, model, args):
    """Every chat's turns, one chat after another or (--interleave) turn by turn."""
    histories = [[{"role": "user", "content": OPENINGS[i % len(OPENINGS)]}]
                 for i in range(args.chats)]
    chats = [[] for _ in histories]
    if args.interleave:
        for turn in range(args.turns):
            for chat, messages in zip(chats, histories):
                chat.append(play_turn(port, model, args, messages, turn))
    else:
        for chat, messages in zip(chats, histories):
            for turn in range(args.turns):
                chat.append(play_turn(port, model, args, messages, turn))
    return chats


def run_server(name, start, args):
    port = free_port()
    process, model = start(port)
    try:
        stream_turn(port, model, [{"role": "user", "content": "Hello"}], 1)  # warm-up
        chats = play_chats(port, model, args)
    finally:
        process.terminate()
        process.wait(timeout=30)
    per_turn = []
    for turn in range(args.turns):
        ttfts = [chat[turn]["ttft_ms"] for chat in chats if chat[turn]["ttft_ms"] is not None]
        prompts = [chat[turn]["prompt_tokens"] or 0 for chat in chats]
        cached = [chat[turn]["cached_tokens"] for chat in chats if chat[turn]["cached_tokens"]]
        per_turn.append({
            "turn": turn + 1,
            "ttft_ms": statistics.median(ttfts) if ttfts else None,
            "prompt_tokens": statistics.median(prompts),
            "cached_tokens": statistics.median(cached) if cached else 0,
        })
    return {"server": name, "turns": per_turn, "chats": chats}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--chats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--interleave", action="store_true",
                        help="chats take turns, so a turn's slot holds another chat")
    parser.add_argument("--out")
    args = parser.parse_args()
    args.model = os.path.abspath(args.model)

    with tempfile.TemporaryDirectory() as workdir:
        results = [
            run_server("tandem", lambda p: start_tandem(args, p, True, workdir), args),
            run_server("tandem-nostore", lambda p: start_tandem(args, p, True, workdir, 0), args)
            if args.interleave else
            run_server("tandem-nocache", lambda p: start_tandem(args, p, False, workdir), args),
            run_server("llama-server", lambda p: start_llama_server(args, p), args),
        ]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)

    names = [r["server"] for r in results]
    order = "interleaved" if args.interleave else "one after another"
    print(f"model {os.path.basename(args.model)}, 1 thread, {args.parallel} slot(s), "
          f"{args.chats} chats {order}, max_tokens {args.max_tokens}; "
          f"median time to first token (ms)")
    print("turn  " + "".join(f"{n:>16}" for n in names) + "   tandem/llama  prompt  cached")
    for turn in range(args.turns):
        row = [r["turns"][turn] for r in results]
        ttfts = [t["ttft_ms"] for t in row]
        ratio = ttfts[0] / ttfts[2] if ttfts[0] and ttfts[2] else float("nan")
        cells = "".join(f"{t:>16.1f}" if t is not None else f"{'-':>16}" for t in ttfts)
        print(f"{turn + 1:>4}  {cells}   {ratio:>12.2f}  {row[0]['prompt_tokens']:>6.0f}"
              f"  {row[0]['cached_tokens']:>6.0f}")


if __name__ == "__main__":
    sys.exit(main())
