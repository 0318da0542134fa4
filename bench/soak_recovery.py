"""Crash recovery checks of the soak (bench/soak_driver.py), after `kill -9` and a restart on
the same SQLite database:

- every review ticket the driver saw created is still there, with the status (and answer or
  note text) it last saw; a change whose response never came back may be either;
- PRAGMA integrity_check is ok, on a copy of the files as the kill left them and on the
  database after the final, graceful stop;
- every request that succeeded more than --trace-margin seconds before the kill has its row
  in `traces` (the writer thread commits each batch as soon as it is queued: docs/TRACES.md);
- the restarted gateway answers: one request per tier, plus the traffic after the restart.
"""
import json
import os
import shutil
import sqlite3
import urllib.error
import urllib.request

import soak_gateway as gw
from soak_reviews import answer_hash


def integrity(path):
    connection = sqlite3.connect(path, timeout=10)
    try:
        rows = connection.execute("PRAGMA integrity_check").fetchall()
        counts = {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                  for table in ("traces", "review_tickets")}
    finally:
        connection.close()
    result = "; ".join(str(r[0]) for r in rows)
    return {"integrity_check": result, "ok": result == "ok", "rows": counts}


def integrity_of_copy(workdir):
    """integrity_check on a copy of the database, its WAL and shared memory, as the kill
    left them (the copy recovers the WAL; the original is left for the restart)."""
    copy_dir = os.path.join(workdir, "after-kill")
    os.makedirs(copy_dir, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        source = os.path.join(workdir, "tandem.db" + suffix)
        if os.path.exists(source):
            shutil.copyfile(source, os.path.join(copy_dir, "tandem.db" + suffix))
    return integrity(os.path.join(copy_dir, "tandem.db"))


def get(port, path, key):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                     headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def check_tickets(port, tickets):
    """Compares every ticket the driver saw with what the restarted gateway says."""
    result = {"checked": len(tickets), "pending": 0, "answered": 0, "rejected": 0,
              "uncertain": 0, "missing": [], "mismatched": []}
    for ticket, seen in sorted(tickets.items()):
        status, body = get(port, f"/v1/tandem/reviews/{ticket}", gw.ADMIN_KEY)
        if status != 200:
            result["missing"].append({"ticket": ticket, "status": status})
            continue
        allowed = [(seen["status"], seen["text"])] + [tuple(u) for u in seen["uncertain"]]
        stored = body.get("answer") if body.get("status") == "answered" else body.get("note")
        if (body.get("status"), stored) not in allowed:
            result["mismatched"].append({
                "ticket": ticket, "driver_saw": seen["status"],
                "driver_text_sha": answer_hash(seen["text"]), "gateway": body.get("status"),
                "gateway_text_sha": answer_hash(stored)})
            continue
        if seen["uncertain"]:
            result["uncertain"] += 1
        result[body["status"]] += 1
    return result


def check_traces(db_path, outcomes, crash, margin):
    """Request ids of successes finished > margin s before the kill, looked up in traces."""
    deadline = crash["kill_t"] - margin
    wanted = sorted({o.request_id for o in outcomes
                     if o.category == "ok" and o.request_id and o.finished < deadline})
    found = set()
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        for i in range(0, len(wanted), 500):
            part = wanted[i:i + 500]
            marks = ",".join("?" * len(part))
            found.update(r[0] for r in connection.execute(
                f"SELECT request_id FROM traces WHERE request_id IN ({marks})", part))
        rows_before_kill = connection.execute("SELECT count(*) FROM traces WHERE unix_ms <= ?",
                                              (crash["kill_unix_ms"],)).fetchone()[0]
    finally:
        connection.close()
    missing = [r for r in wanted if r not in found]
    return {"expected": len(wanted), "found": len(found), "missing": len(missing),
            "missing_examples": missing[:10], "margin_s": margin,
            "rows_before_kill": rows_before_kill}


def probe_requests(port):
    """One non-streaming request per tier to the restarted gateway."""
    results = {}
    for model in (gw.EDGE_MODEL, "cloud-ok", gw.ROUTED_MODEL):
        body = json.dumps({"model": model, "max_tokens": 8,
                           "messages": [{"role": "user", "content": "Once upon a time"}]})
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions", data=body.encode(),
            headers={"Authorization": f"Bearer {gw.CLIENT_KEY}",
                     "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer = json.loads(response.read())
                results[model] = f"{response.status} {answer['tandem']['tier']}"
        except (urllib.error.URLError, OSError, KeyError, ValueError) as e:
            results[model] = f"failed: {e}"
    return results


def verify(gateway, args, tickets, outcomes, crash):
    db_path = os.path.join(args.workdir, "tandem.db")
    probes = probe_requests(gateway.port)
    after_restart = [o for o in outcomes if getattr(o, "phase", "") == "after_restart"]
    return {
        "tickets": check_tickets(gateway.port, tickets),
        "traces": check_traces(db_path, outcomes, crash, args.trace_margin),
        "probes": probes,
        "probes_ok": all(v.startswith("200") for v in probes.values()),
        "after_restart": {"requests": len(after_restart),
                          "ok": sum(o.category == "ok" for o in after_restart)},
    }
