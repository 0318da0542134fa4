-- wrk script for bench/gateway_bench.sh: POSTs the same non-streaming chat completion
-- (max_tokens 4) on every request, the model from $GATEWAY_MODEL, and prints one JSON line
-- with the counts at the end (wrk's own "Non-2xx" and "Socket errors" lines, machine-readable).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
-- GATEWAY_STREAM=1: the same request streamed (one SSE chunk per token).
wrk.body = '{"model":"' .. (os.getenv("GATEWAY_MODEL") or "fault-ok") ..
  '","messages":[{"role":"user","content":"hi"}],"max_tokens":4' ..
  (os.getenv("GATEWAY_STREAM") == "1" and ',"stream":true' or '') .. '}'

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"rps":%.1f,"non2xx":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
