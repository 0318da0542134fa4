"""Starting the servers a benchmark compares, on loopback, and reading their streamed answers.

Shared by bench/chat_turns.py and bench/edge_features.py: a free port, llama.cpp's llama-server
from the project's cache, waiting for /health, and one streamed chat completion timed at the
client.
"""

import http.client
import json
import os
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TANDEM = os.path.join(ROOT, "build", "tandem")
MODEL = os.path.join(ROOT, "models", "stories260K.gguf")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llama_server_binary():
    """llama-server from the llama.cpp cache (scripts/build-llama.sh prints its prefix last)."""
    prefix = subprocess.run([os.path.join(ROOT, "scripts", "build-llama.sh")], check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return os.path.join(prefix, "bin", "llama-server")


def wait_ready(port, process, path="/health", timeout_s=120):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server on port {port} exited with {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server on port {port} never became ready")


class StreamedAnswer:
    """One streamed chat completion: times in seconds from just before the request was written."""

    def __init__(self):
        self.first = None  # first chunk with content
        self.last = None   # last chunk with content
        self.text = ""
        self.usage = {}

    @property
    def completion_tokens(self):
        return self.usage.get("completion_tokens", 0)

    def decode_rate(self):
        """Tokens per second after the first, or None when there is nothing to time."""
        n = self.completion_tokens
        if self.first is None or self.last is None or self.last <= self.first or n < 2:
            return None
        return (n - 1) / (self.last - self.first)


def stream_chat(port, body):
    """POSTs `body` to /v1/chat/completions with streaming and usage on; a StreamedAnswer."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body).encode(),
                 {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise SystemExit(f"port {port}: HTTP {response.status}: {response.read()[:300]!r}")
    answer = StreamedAnswer()
    pieces = []
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            answer.usage = event["usage"]
        for choice in event.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                now = time.perf_counter() - started
                answer.first = now if answer.first is None else answer.first
                answer.last = now
                pieces.append(piece)
    conn.close()
    answer.text = "".join(pieces)
    return answer
