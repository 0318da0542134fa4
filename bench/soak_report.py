"""The soak's summary and verdicts (bench/soak_driver.py): counts per request kind and
category, faults injected, resources before/during/after, the RSS trend, crash recovery."""
from collections import Counter, defaultdict

import soak_gateway as gw

CATEGORIES = ("ok", "documented", "disconnect", "crash_window", "unexpected", "driver_error")


def requests_summary(outcomes, main_seconds):
    """Per kind: counts by category, the details of each, requests/s in the main phase."""
    kinds = defaultdict(lambda: {"total": 0, "main_phase": 0, **{c: 0 for c in CATEGORIES},
                                 "details": Counter(), "by_sub": defaultdict(Counter)})
    for o in outcomes:
        k = kinds[o.kind]
        k["total"] += 1
        k["main_phase"] += o.phase == "main"
        k[o.category] += 1
        k["details"][f"{o.category}: {o.detail}"] += 1
        if o.sub:
            k["by_sub"][o.sub][o.category if o.category != "ok" else o.detail] += 1
    latencies = defaultdict(list)
    for o in outcomes:
        latencies[o.kind].append(o.finished - o.started)
    out = {}
    for name, k in sorted(kinds.items()):
        k["rps_main"] = round(k["main_phase"] / main_seconds, 2) if main_seconds else None
        k["latency_s"] = percentiles(latencies[name])
        k["details"] = dict(k["details"].most_common())
        k["by_sub"] = {s: dict(c) for s, c in sorted(k["by_sub"].items())}
        out[name] = k
    return out


def percentiles(values):
    """p50/p99/max of a list of seconds (nearest rank)."""
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": round(pick(0.5), 3), "p99": round(pick(0.99), 3), "max": round(ordered[-1], 3)}


def totals(outcomes):
    return dict(Counter(o.category for o in outcomes))


def examples(outcomes, categories=("unexpected", "driver_error"), limit=10):
    bad = [o for o in outcomes if o.category in categories]
    return [{"kind": o.kind, "sub": o.sub, "stream": o.stream, "phase": o.phase,
             "detail": o.detail} for o in bad[:limit]]


def faults_injected(stats):
    """Requests fault_upstream served per upstream model over the whole run."""
    return dict(sorted(stats.get("requests", {}).items()))


def rss_trend(samples, window):
    """Least-squares slope of RSS (MiB/min) over the second half of the main load."""
    start, end = window
    half = [s for s in samples if s["t"] >= (start + end) / 2]
    if len(half) < 3:
        return {"slope_mib_per_min": None, "samples": len(half), "span_s": 0}
    xs = [(s["t"] - half[0]["t"]) / 60 for s in half]
    ys = [s["rss_kib"] / 1024 for s in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return {"slope_mib_per_min": round(slope, 4), "samples": len(half),
            "span_s": round((half[-1]["t"] - half[0]["t"]), 1)}


def resource_view(s):
    if s is None:
        return None
    return {k: s[k] for k in ("pid", "fds", "threads", "rss_kib", "client_connections",
                              "upstream_connections", "connections", "fd_kinds")}


def verdict(name, passed, detail):
    return {"name": name, "passed": bool(passed), "detail": detail}


def extra_descriptors(base, after):
    """Descriptor kinds the quiet gateway holds more of than at its quiet baseline, upstream
    connections aside (their own verdict): kind -> how many more."""
    before, now = gw.own_kinds(base), gw.own_kinds(after)
    return {k: n - before.get(k, 0) for k, n in sorted(now.items()) if n > before.get(k, 0)}


def settle_text(sample, base=None):
    """How long the gateway took to be quiet and, when that was longer than --quiet, what was
    still open at --quiet seconds (what a fixed sleep would have counted)."""
    settle = sample["settle"]
    text = (f"quiet after {settle['waited_s']} s" if settle["settled"]
            else f"NOT quiet after {settle['waited_s']} s")
    early = settle.get("after_quiet_s")
    if early and (early["fd_kinds"] != sample["fd_kinds"] or early["active_streams"]
                  or early["client_connections"] or early["threads"] != sample["threads"]):
        over = extra_descriptors(base, early) if base is not None else "-"
        text += (f" (at the --quiet mark: descriptors over the baseline "
                 f"{over or 'none'}, {early['client_connections']} client connections, "
                 f"{early['active_streams']} streams open at fault_upstream, "
                 f"{early['threads']} threads)")
    return text


def resource_verdicts(run, args):
    base, after = run["baseline"], run["after"]
    own_fds = lambda s: s["fds"] - s["upstream_connections"]  # noqa: E731
    upstream_after = after["connections"]["upstream"]
    base_close_wait = base["connections"]["upstream"].get("CLOSE_WAIT", 0)
    active = after["upstream_stats"].get("active_streams", 0)
    extra = extra_descriptors(base, after)
    # The idle keep-alive pool may grow to the most requests ever in flight to an upstream at
    # once: the clients' concurrency, plus a stream burst's streams.
    pool_growth = args.concurrency + (gw.MAX_STREAMS_PER_KEY + 1 if run["features"].get("limits")
                                      else 0)
    return [
        verdict("gateway quiet before each count",
                base["settle"]["settled"] and after["settle"]["settled"],
                f"baseline {settle_text(base)}, after the load {settle_text(after, base)} (no open "
                f"connection, descriptors and threads unchanged for {args.quiet} s; "
                f"at most {args.settle_timeout} s)"),
        verdict("fds back to baseline", sum(extra.values()) <= args.fd_tolerance,
                f"{base['fds']} -> {after['fds']} (of which upstream keep-alive "
                f"{base['upstream_connections']} -> {after['upstream_connections']}); without "
                f"them {own_fds(base)} -> {own_fds(after)}, extra by kind {extra or 'none'}, "
                f"tolerance +{args.fd_tolerance}"),
        verdict("threads back to baseline",
                after["threads"] - base["threads"] <= args.thread_tolerance,
                f"{base['threads']} -> {after['threads']}, tolerance +{args.thread_tolerance}"),
        verdict("client connections back to baseline",
                after["client_connections"] <= base["client_connections"],
                f"{base['client_connections']} -> {after['client_connections']} "
                f"{after['connections']['client']}"),
        verdict("upstream connections bounded and idle",
                after["upstream_connections"] <= base["upstream_connections"] + pool_growth
                and upstream_after.get("CLOSE_WAIT", 0) <= base_close_wait and active == 0,
                f"{base['upstream_connections']} -> {after['upstream_connections']} "
                f"{upstream_after}; tolerance +{pool_growth} (idle keep-alive pool), "
                f"no new CLOSE_WAIT; streams still open at fault_upstream: {active}"),
    ]


def rss_verdict(trend, args):
    slope = trend["slope_mib_per_min"]
    if slope is None or trend["span_s"] < args.min_slope_span:
        return verdict("RSS flat", True, f"not judged: the fit spans {trend['span_s']} s "
                       f"(< {args.min_slope_span:.0f} s); slope {slope} MiB/min")
    return verdict("RSS flat", slope < args.max_rss_slope,
                   f"{slope:+.3f} MiB/min over the second half ({trend['samples']} samples, "
                   f"{trend['span_s']:.0f} s), threshold {args.max_rss_slope} MiB/min")


def recovery_verdicts(run):
    rec, crash = run["recovery"], run["crash"]
    t, tr = rec["tickets"], rec["traces"]
    return [
        verdict("review tickets survive kill -9", not t["missing"] and not t["mismatched"],
                f"{t['checked']} tickets: {t['pending']} pending, {t['answered']} answered, "
                f"{t['rejected']} rejected ({t['uncertain']} with a change in flight); "
                f"missing {len(t['missing'])}, changed {len(t['mismatched'])}"),
        verdict("traces survive kill -9", tr["missing"] == 0,
                f"{tr['found']}/{tr['expected']} requests finished > {tr['margin_s']} s before "
                f"the kill have their trace; {tr['rows_before_kill']} rows up to the kill"),
        verdict("database integrity", crash["db_after_kill"]["ok"] and rec["db_after_stop"]["ok"],
                f"after kill -9: {crash['db_after_kill']['integrity_check']}; after the final "
                f"stop: {rec['db_after_stop']['integrity_check']}"),
        verdict("restarted gateway answers",
                rec["probes_ok"] and rec["after_restart"]["ok"] > 0,
                f"restart took {crash['restart_s']} s; probes {rec['probes']}; traffic after "
                f"the restart {rec['after_restart']['ok']}/{rec['after_restart']['requests']} ok"),
        verdict("graceful stop exits 0", rec["graceful_stop_exit"] == 0,
                f"SIGTERM at the end: exit {rec['graceful_stop_exit']}"),
    ]


def summarise(run, args, gateway):
    outcomes = run["outcomes"]
    main_seconds = run["main_window"][1] - run["main_window"][0]
    trend = rss_trend(run["samples"], run["main_window"])
    during = run["samples"]
    bad = examples(outcomes)
    crashes = gateway.unexpected_exits()
    verdicts = [
        verdict("no unexpected responses", not bad,
                f"{sum(o.category in ('unexpected', 'driver_error') for o in outcomes)} "
                f"unexpected of {len(outcomes)}"),
        verdict("no gateway crash", not crashes,
                f"processes: {run['gateway_history']}"),
        *resource_verdicts(run, args),
        rss_verdict(trend, args),
        *recovery_verdicts(run),
    ]
    rss_values = [s["rss_kib"] for s in during] + [run["baseline"]["rss_kib"],
                                                   run["after"]["rss_kib"]]
    return {
        "passed": all(v["passed"] for v in verdicts),
        "verdicts": verdicts,
        "command": {"duration_s": args.duration, "concurrency": args.concurrency,
                    "seed": args.seed, "max_tokens": args.max_tokens},
        "features": run["features"],
        "timing": run["timing"],
        "totals": totals(outcomes),
        "by_phase": dict(Counter(o.phase for o in outcomes)),
        "requests": requests_summary(outcomes, main_seconds),
        "unexpected_examples": bad,
        "faults_injected": faults_injected(run["final_upstream_stats"]),
        "resources": {
            "baseline": resource_view(run["baseline"]), "after": resource_view(run["after"]),
            "after_restart": resource_view(run["final"]),
            "during_max": {k: max((s[k] for s in during), default=None)
                           for k in ("fds", "threads", "client_connections",
                                     "upstream_connections", "rss_kib")},
            "samples": [{k: s[k] for k in ("t", "fds", "threads", "rss_kib",
                                           "client_connections", "upstream_connections")}
                        for s in during],
        },
        "rss": {"start_mib": round(run["baseline"]["rss_kib"] / 1024, 1),
                "peak_mib": round(max(rss_values) / 1024, 1),
                "end_mib": round(run["after"]["rss_kib"] / 1024, 1), **trend},
        "crash": {k: v for k, v in run["crash"].items() if not k.endswith("_t")},
        "recovery": run["recovery"],
    }


def print_summary(s):
    p = print
    p("\n== Tandem soak ==")
    c = s["command"]
    p(f"duration {c['duration_s']:.0f} s, concurrency {c['concurrency']}, seed {c['seed']}; "
      f"timing {s['timing']}; features {s['features']}")
    p(f"responses: {s['totals']}; by phase {s['by_phase']}")
    p(f"{'kind':24} {'total':>7} {'req/s':>6} {'ok':>7} {'documented':>10} {'disconnect':>10} "
      f"{'crash':>6} {'unexpected':>10}  (req/s: main phase)")
    for name, k in s["requests"].items():
        p(f"{name:24} {k['total']:7} {k['rps_main'] or 0:6.1f} {k['ok']:7} {k['documented']:10} "
          f"{k['disconnect']:10} {k['crash_window']:6} {k['unexpected'] + k['driver_error']:10}"
          f"  latency s {k['latency_s']}")
    fault = s["requests"].get("cloud_fault", {}).get("by_sub", {})
    for sub, counts in fault.items():
        p(f"  {sub:30} {counts}")
    p(f"faults served by fault_upstream: {s['faults_injected']}")
    r = s["resources"]
    for label in ("baseline", "after", "after_restart"):
        v = r[label]
        if v:
            p(f"{label:14} pid {v['pid']} fds {v['fds']} threads {v['threads']} "
              f"rss {v['rss_kib'] / 1024:.1f} MiB client conns {v['client_connections']} "
              f"upstream conns {v['upstream_connections']} {v['connections']['upstream']}")
            p(f"{'':14} fds by kind {v.get('fd_kinds')}")
    p(f"during (max)   {r['during_max']}")
    p(f"RSS: start {s['rss']['start_mib']} MiB, peak {s['rss']['peak_mib']} MiB, end "
      f"{s['rss']['end_mib']} MiB, slope {s['rss']['slope_mib_per_min']} MiB/min over "
      f"{s['rss']['span_s']} s")
    if s["unexpected_examples"]:
        p("unexpected (first ones):")
        for e in s["unexpected_examples"]:
            p(f"  {e}")
    p("verdicts:")
    for v in s["verdicts"]:
        p(f"  [{'PASS' if v['passed'] else 'FAIL'}] {v['name']}: {v['detail']}")
    p(f"soak: {'PASSED' if s['passed'] else 'FAILED'}")

