#!/usr/bin/env python3
"""Many concurrent streaming chat completions at once, with raw asyncio HTTP/1.1.

    gateway_stream_client.py --port P --model M [--streams 1000] [--max-tokens 20]
                             [--stats-port UPSTREAM_PORT] [--timeout 60] [--out raw.json]

Opens --streams TCP connections first (all of them, concurrently), then writes one
POST /v1/chat/completions {"stream": true} on every connection at the same moment, and reads
each chunked SSE response to the end. A stream succeeds when the status is 200 and the body
ends with `data: [DONE]`. Times: from writing the request to the first body byte (ttfb) and to
the end of the body (total). With --stats-port the upstream's GET /control/stats is polled
every 100 ms and the highest `active_streams` seen is reported: proof the streams were really
concurrent at the upstream.

Prints one JSON object with the counts, the failure reasons and the p50/p99 times in ms.
"""
import argparse
import asyncio
import collections
import json
import sys
import time


def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    rank = max(1, int(-(-fraction * len(sorted_values) // 1)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


async def read_headers(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    return status, headers


async def read_body(reader, headers, on_first_byte):
    """The whole body: chunked, Content-Length, or until the connection closes."""
    parts = []
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # trailers end (none expected)
                break
            chunk = await reader.readexactly(size + 2)
            if not parts:
                on_first_byte()
            parts.append(chunk[:-2])
    elif "content-length" in headers:
        data = await reader.readexactly(int(headers["content-length"]))
        on_first_byte()
        parts.append(data)
    else:
        data = await reader.read()
        on_first_byte()
        parts.append(data)
    return b"".join(parts)


class Stream:
    def __init__(self):
        self.reader = None
        self.writer = None
        self.sent_at = None
        self.first_byte_at = None
        self.done_at = None
        self.error = None


async def connect(stream, port, timeout):
    try:
        stream.reader, stream.writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, limit=1 << 20), timeout)
    except Exception as exc:  # noqa: BLE001 - every failure is counted, by kind
        stream.error = f"connect: {type(exc).__name__}: {exc}"[:120]


async def run_one(stream, request, start_event, timeout):
    if stream.error:
        return
    await start_event.wait()
    try:
        stream.sent_at = time.perf_counter()
        stream.writer.write(request)
        await stream.writer.drain()

        def first_byte():
            stream.first_byte_at = time.perf_counter()

        status, headers = await asyncio.wait_for(read_headers(stream.reader), timeout)
        body = await asyncio.wait_for(read_body(stream.reader, headers, first_byte), timeout)
        stream.done_at = time.perf_counter()
        if status != 200:
            stream.error = f"status {status}"
        elif not body.rstrip().endswith(b"data: [DONE]"):
            stream.error = "no data: [DONE] at the end"
    except asyncio.TimeoutError:
        stream.error = "timeout"
    except Exception as exc:  # noqa: BLE001
        stream.error = f"{type(exc).__name__}: {exc}"[:120]
    finally:
        try:
            stream.writer.close()
        except Exception:  # noqa: BLE001
            pass


async def poll_active_streams(port, stop, peak):
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /control/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            await writer.drain()
            data = await reader.read()
            writer.close()
            stats = json.loads(data.split(b"\r\n\r\n", 1)[1])
            peak["active_streams"] = max(peak["active_streams"], stats.get("active_streams", 0))
            peak["open_connections"] = max(peak["open_connections"],
                                           stats.get("open_connections", 0))
        except Exception:  # noqa: BLE001 - a missed poll only lowers the reported peak
            pass
        try:
            await asyncio.wait_for(stop.wait(), 0.1)
        except asyncio.TimeoutError:
            pass


async def main_async(args):
    body = json.dumps({
        "model": args.model,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": args.max_tokens,
    }).encode()
    request = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
               f"Content-Type: application/json\r\nAccept: text/event-stream\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body

    streams = [Stream() for _ in range(args.streams)]
    connect_started = time.perf_counter()
    await asyncio.gather(*(connect(s, args.port, args.timeout) for s in streams))
    connect_s = time.perf_counter() - connect_started

    stop = asyncio.Event()
    peak = {"active_streams": 0, "open_connections": 0}
    poller = (asyncio.create_task(poll_active_streams(args.stats_port, stop, peak))
              if args.stats_port else None)
    start = asyncio.Event()
    tasks = [asyncio.create_task(run_one(s, request, start, args.timeout)) for s in streams]
    await asyncio.sleep(0)
    began = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    wall_s = time.perf_counter() - began
    stop.set()
    if poller:
        await poller

    ok = [s for s in streams if s.error is None]
    totals = sorted((s.done_at - s.sent_at) * 1000 for s in ok)
    ttfbs = sorted((s.first_byte_at - s.sent_at) * 1000 for s in ok if s.first_byte_at)
    reasons = collections.Counter(s.error for s in streams if s.error)
    result = {
        "streams": args.streams,
        "ok": len(ok),
        "failed": args.streams - len(ok),
        "failures": dict(reasons.most_common(10)),
        "connect_all_s": round(connect_s, 3),
        "wall_s": round(wall_s, 3),
        "total_p50_ms": percentile(totals, 0.5),
        "total_p99_ms": percentile(totals, 0.99),
        "total_max_ms": totals[-1] if totals else None,
        "ttfb_p50_ms": percentile(ttfbs, 0.5),
        "ttfb_p99_ms": percentile(ttfbs, 0.99),
    }
    if args.stats_port:
        result["upstream_peak_active_streams"] = peak["active_streams"]
        result["upstream_peak_open_connections"] = peak["open_connections"]
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"summary": result, "totals_ms": totals, "ttfb_ms": ttfbs}, f)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--max-tokens", type=int, default=20)
    parser.add_argument("--stats-port", type=int)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--out")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
