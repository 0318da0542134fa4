"""How bench/soak_driver.py judges one response: a success, a documented error, or unexpected.

The documented errors are those of docs/GATEWAY.md ("Errors", "Which tier answers"),
docs/OPERATIONS.md (a client's key on an operator endpoint: 403) and docs/ROUTING.md (answering
a closed review ticket: 409). Each is (status, OpenAI error `type`, allowed `code`s).
"""
import json

# status -> (error type, allowed codes; None is the JSON null). `limit_exceeded`,
# `too_many_streams`, `not_an_admin` and `too_many_connections` come with server.limits,
# server.max_connections and admin keys (the security work).
DOCUMENTED_ERRORS = {
    400: ("invalid_request_error", {None, "context_length_exceeded", "limit_exceeded"}),
    401: ("invalid_request_error", {"invalid_api_key"}),
    403: ("permission_error", {"model_not_allowed", "not_a_reviewer", "not_an_admin"}),
    404: ("invalid_request_error", {None, "model_not_found"}),
    405: ("invalid_request_error", {None}),
    408: ("invalid_request_error", {None}),
    409: ("invalid_request_error", {"review_already_closed"}),
    413: ("invalid_request_error", {None}),
    429: ("rate_limit_error", {"too_many_streams"}),
    431: ("invalid_request_error", {None}),
    502: ("server_error", {"upstream_error", "cloud_unavailable"}),
    503: ("server_error", {"engine_busy", "edge_unavailable", "shutting_down",
                          "edge_unavailable_for_private_data", "too_many_connections"}),
}
# An error event inside a stream, after content was sent (docs/GATEWAY.md "Fallback only
# before the first byte"): the upstream or tier failures.
STREAM_ERROR_CODES = {"upstream_error", "cloud_unavailable", "edge_unavailable", "engine_busy"}
TIERS = {"edge", "cloud", "human", "edge+cloud"}  # edge+cloud: token-level collaboration
CHUNK_OBJECTS = {"chat.completion.chunk", "text_completion"}
COMPLETION_OBJECTS = {"chat.completion", "text_completion"}


class Verdict:
    """category: ok | documented | unexpected; detail: what it was (for the counts)."""

    def __init__(self, category, detail, request_id=None, tier=None, ticket=None, status=None):
        self.category = category
        self.detail = detail
        self.request_id = request_id
        self.tier = tier
        self.ticket = ticket
        self.status = status


def unexpected(detail, status=None):
    return Verdict("unexpected", detail, status=status)


def error_verdict(status, body_bytes, expected_status=None, expected_code="any",
                  expected_param="any"):
    """A non-2xx response: its status and body must be a documented error (and the one
    expected, when given)."""
    try:
        body = json.loads(body_bytes)
        error = body["error"]
        shape_ok = isinstance(error, dict) and {"message", "type", "param", "code"} <= error.keys()
    except (ValueError, KeyError, TypeError):
        return unexpected(f"{status} with a body that is not an OpenAI error: "
                          f"{body_bytes[:200]!r}", status)
    if not shape_ok:
        return unexpected(f"{status} error lacks message/type/param/code: {error}", status)
    code = error.get("code")
    if expected_status is not None and status != expected_status:
        return unexpected(f"expected {expected_status}, got {status} {code}: "
                          f"{error.get('message')}", status)
    if expected_code != "any" and code != expected_code:
        return unexpected(f"expected code {expected_code}, got {status} {code}", status)
    if expected_param != "any" and error.get("param") != expected_param:
        return unexpected(f"expected param {expected_param}, got {error.get('param')}", status)
    if status not in DOCUMENTED_ERRORS:
        return unexpected(f"undocumented status {status} {code}: {error.get('message')}", status)
    kind, codes = DOCUMENTED_ERRORS[status]
    if code not in codes or (kind is not None and error.get("type") != kind):
        return unexpected(f"undocumented error {status} type={error.get('type')} code={code}: "
                          f"{error.get('message')}", status)
    return Verdict("documented", f"{status} {code or error.get('type')}", status=status)


def record_problem(record, response_tier, asked_model, cloud_models, stream=False):
    """Checks the decision record ("Never silent"): a tier, the header agreeing, and a cloud
    model answered by the edge marked degraded. A stream's header is sent before its tier is
    final (a P3 revision, a cloud hand-off), so it need only name one of `tiers`. Returns a
    problem or None."""
    if not isinstance(record, dict):
        return "no tandem decision record"
    tier = record.get("tier")
    if tier not in TIERS:
        return f"decision record tier {tier!r}"
    header_ok = response_tier == tier or (stream and response_tier in (record.get("tiers") or []))
    if response_tier and not header_ok:
        return f"X-Tandem-Tier {response_tier} but tandem.tier {tier}, tiers {record.get('tiers')}"
    if asked_model in cloud_models and tier == "edge" and not record.get("degraded"):
        return f"cloud model {asked_model} answered by the edge without tandem.degraded"
    return None


def judge_completion(response, asked_model, cloud_models):
    """A non-streaming request's response."""
    if response.status != 200:
        return error_verdict(response.status, response.body)
    try:
        body = json.loads(response.body)
        choices = body["choices"]
        record = body.get("tandem")
        ok = body.get("object") in COMPLETION_OBJECTS and len(choices) == 1 and body.get("id")
    except (ValueError, KeyError, TypeError):
        return unexpected(f"200 with a body that is not a completion: {response.body[:200]!r}",
                          200)
    if not ok:
        return unexpected(f"200 completion malformed: {response.body[:200]!r}", 200)
    problem = record_problem(record, response.header("x-tandem-tier"), asked_model, cloud_models)
    if problem:
        return unexpected(problem, 200)
    return success(body["id"], record, choices[0].get("finish_reason"))


def success(request_id, record, finish_reason):
    tier = record["tier"]
    detail = tier + (" degraded" if record.get("degraded") else "")
    ticket = None
    if tier == "human":
        ticket = (record.get("review") or {}).get("ticket")
        if finish_reason != "pending_review" or not ticket:
            return unexpected(f"human tier without a pending ticket: {record.get('review')}", 200)
    return Verdict("ok", detail, request_id=request_id, tier=tier, ticket=ticket, status=200)


class StreamJudge:
    """Follows one SSE stream event by event; verdict() once it has ended."""

    def __init__(self, asked_model, cloud_models, response_tier):
        self.asked_model = asked_model
        self.cloud_models = cloud_models
        self.response_tier = response_tier
        self.request_id = None
        self.finish_reason = None
        self.last_chunk = None
        self.error = None
        self.done = False
        self.problem = None
        self.events = 0

    def feed(self, name, payload):
        self.events += 1
        if self.problem:
            return
        if self.done:
            self.problem = f"event after [DONE]: {payload[:120]!r}"
            return
        if payload == "[DONE]":
            self.done = True
            return
        if self.error is not None:
            self.problem = f"event after the error event: {payload[:120]!r}"
            return
        try:
            data = json.loads(payload)
        except ValueError:
            self.problem = f"event is not JSON: {payload[:120]!r}"
            return
        if "error" in data:
            self.error = data
            return
        if data.get("object") not in CHUNK_OBJECTS or not isinstance(data.get("choices"), list):
            self.problem = f"event is not a chunk: {payload[:160]!r}"
            return
        if name not in ("", "tandem.revision"):
            self.problem = f"unknown event name {name!r}"
            return
        self.request_id = self.request_id or data.get("id")
        for choice in data["choices"]:
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
        self.last_chunk = data

    def verdict(self, leftover):
        if self.problem:
            return unexpected("stream: " + self.problem, 200)
        if not self.done:
            return unexpected(f"stream ended without data: [DONE] after {self.events} events", 200)
        if leftover:
            return unexpected(f"stream: bytes after the last event: {leftover[:80]!r}", 200)
        if self.error is not None:
            return self.error_event_verdict()
        if self.last_chunk is None:
            return unexpected("stream with no chunk", 200)
        record = self.last_chunk.get("tandem")
        problem = record_problem(record, self.response_tier, self.asked_model, self.cloud_models,
                                 stream=True)
        if problem:
            return unexpected("stream: " + problem, 200)
        return success(self.request_id, record, self.finish_reason)

    def error_event_verdict(self):
        error = self.error.get("error")
        if not isinstance(error, dict) or not {"message", "type", "param", "code"} <= error.keys():
            return unexpected(f"stream error event not in OpenAI's shape: {self.error}", 200)
        if error.get("code") not in STREAM_ERROR_CODES or "tandem" not in self.error:
            return unexpected(f"stream error event undocumented or without a record: "
                              f"code={error.get('code')} {error.get('message')}", 200)
        return Verdict("documented", f"stream error {error['code']}", status=200)
