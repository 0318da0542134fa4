"""The review queue's traffic in the soak (bench/soak_driver.py): tickets created with
`X-Tandem-Review: required`, answered or rejected by the admin key through the API, answered
again once closed (409), polled by the client; and the record of what the driver last saw of
each ticket, which the crash-recovery check (soak_recovery.py) compares with the restarted
gateway.
"""
import hashlib
import json
import threading
import time
import uuid

import soak_gateway as gw
from soak_http import HttpError
from soak_judge import Verdict, error_verdict, unexpected
from soak_traffic import Outcome, completion


class Tickets:
    """The review tickets this driver saw created, and what it last saw of each. A change in
    flight when the gateway died is `uncertain` (either state may be the stored one)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_id = {}  # id -> {"status", "text", "uncertain": [(status, text)]}

    def created(self, ticket):
        with self.lock:
            self.by_id.setdefault(ticket, {"status": "pending", "text": None, "uncertain": []})

    def claim_pending(self, rng, status, text):
        """Picks a pending ticket nobody is changing and marks the change as in flight."""
        with self.lock:
            pending = [t for t, s in self.by_id.items() if s["status"] == "pending"
                       and not s["uncertain"]]
            if not pending:
                return None
            ticket = rng.choice(pending)
            self.by_id[ticket]["uncertain"].append((status, text))
            return ticket

    def any_ticket(self, rng):
        with self.lock:
            return rng.choice(list(self.by_id)) if self.by_id else None

    def allowed_states(self, ticket):
        """The statuses the gateway may report now: the last seen and any in flight."""
        with self.lock:
            entry = self.by_id.get(ticket, {"status": None, "uncertain": []})
            return {entry["status"]} | {s for s, _ in entry["uncertain"]}

    def take_closed(self, rng):
        with self.lock:
            closed = [t for t, s in self.by_id.items() if s["status"] != "pending"]
            return rng.choice(closed) if closed else None

    def end_change(self, ticket, status, text, applied):
        with self.lock:
            entry = self.by_id[ticket]
            entry["uncertain"].remove((status, text))
            if applied:
                entry["status"], entry["text"] = status, text

    def snapshot(self):
        with self.lock:
            return {t: dict(s, uncertain=list(s["uncertain"])) for t, s in self.by_id.items()}


def review_create(c):
    body = c.body(gw.ROUTED_MODEL, "Should I sue my landlord over the deposit?",
                  c.rng.random() < 0.3)
    return completion(c, "review_create", gw.ROUTED_MODEL, body, {"X-Tandem-Review": "required"})


def review_work(c):
    """The reviewer answers or rejects one of the driver's pending tickets; sometimes answers a
    closed one again (409), and the client polls a ticket."""
    roll = c.rng.random()
    if roll < 0.1 and (closed := c.tickets.take_closed(c.rng)):
        return review_post(c, closed, "answered", "again", expect_status=409)
    if roll < 0.25 and (ticket := c.tickets.any_ticket(c.rng)):
        return review_poll(c, ticket)
    status = "answered" if c.rng.random() < 0.7 else "rejected"
    text = f"Reviewed {uuid.uuid4().hex[:12]}: talk to a tenants' association first."
    ticket = c.tickets.claim_pending(c.rng, status, text)
    if ticket is None:
        return review_list(c)
    return review_post(c, ticket, status, text)


def review_post(c, ticket, status, text, expect_status=200):
    """POSTs an answer or rejection; a claimed change (expect 200) is settled afterwards."""
    verb, field = ("answer", "answer") if status == "answered" else ("reject", "note")
    payload = json.dumps({field: text, "reviewer": "soak"}).encode()
    started = time.monotonic()
    try:
        response = c.conn.request("POST", f"/v1/tandem/reviews/{ticket}/{verb}",
                                  c.headers(gw.ADMIN_KEY), payload)
    except HttpError as e:  # the change stays uncertain: it may or may not have been stored
        outcome = Outcome("review_work", started, unexpected(f"transport: {e}"), verb)
        outcome.transport_error = True
        return outcome
    if expect_status == 200:
        c.tickets.end_change(ticket, status, text, response.status == 200)
    if response.status != expect_status:
        return Outcome("review_work", started, error_verdict(response.status, response.body,
                                                             expect_status, "any"), verb)
    if response.status != 200:
        return Outcome("review_work", started, error_verdict(response.status, response.body),
                       verb + " closed")
    got = json.loads(response.body)
    if got.get("status") != status:
        return Outcome("review_work", started,
                       unexpected(f"{verb}: ticket is {got.get('status')}, not {status}"), verb)
    return Outcome("review_work", started, Verdict("ok", verb), verb)


def review_poll(c, ticket):
    started = time.monotonic()
    allowed = c.tickets.allowed_states(ticket)  # before and after: a change may land meanwhile
    try:
        response = c.conn.request("GET", f"/v1/tandem/reviews/{ticket}", c.headers(), None)
    except HttpError as e:
        outcome = Outcome("review_work", started, unexpected(f"transport: {e}"), "poll")
        outcome.transport_error = True
        return outcome
    if response.status != 200:
        return Outcome("review_work", started, error_verdict(response.status, response.body),
                       "poll")
    got = json.loads(response.body)
    allowed |= c.tickets.allowed_states(ticket)
    if got.get("status") not in allowed:
        return Outcome("review_work", started,
                       unexpected(f"poll: ticket {ticket} is {got.get('status')}, driver saw "
                                  f"{sorted(allowed)}"), "poll")
    return Outcome("review_work", started, Verdict("ok", "poll"), "poll")


def review_list(c):
    started = time.monotonic()
    try:
        response = c.conn.request("GET", "/v1/tandem/reviews?status=pending&limit=20",
                                  c.headers(gw.ADMIN_KEY), None)
    except HttpError as e:
        outcome = Outcome("review_work", started, unexpected(f"transport: {e}"), "list")
        outcome.transport_error = True
        return outcome
    if response.status != 200:
        return Outcome("review_work", started, error_verdict(response.status, response.body),
                       "list")
    return Outcome("review_work", started, Verdict("ok", "list"), "list")


def answer_hash(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16] if text is not None else None
