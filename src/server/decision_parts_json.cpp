// The decision record's parts as JSON text. The routing part's members mirror
// routing::to_json(RouteExplanation) (routing/route_explanation.cpp), which the CLI and the
// route API write; tests/server/decision_parts_test.cpp holds the two to the same text.

#include "server/decision_parts_json.h"

#include "routing/query_kind.h"

namespace tandem::server {
namespace {

// A count as JSON's integer (sizes and token counts are never near int64's limit).
int64_t count(size_t value) {
  return static_cast<int64_t>(value);
}

void write_string_or_null(JsonWriter& out, const std::optional<std::string>& text) {
  if (text) {
    out.string(*text);
  } else {
    out.null();
  }
}

void write_judged(JsonWriter& out, const JudgedConfidence& confidence) {
  if (confidence.value) {
    out.number(*confidence.value);
  } else {
    out.null();
  }
}

void write_decision(JsonWriter& out, const routing::Decision& decision) {
  out.begin_object()
      .member("cloud_allowed"_key, decision.cloud_allowed)
      .member("from_memory"_key, decision.from_memory)
      .key("notice"_key);
  write_string_or_null(out, decision.notice);
  out.member("pattern"_key, routing::pattern_name(decision.pattern))
      .key("reasons"_key)
      .begin_array();
  for (const auto& r : decision.reasons) {
    out.begin_object()
        .member("code"_key, routing::reason_code_name(r.code))
        .member("detail"_key, r.detail)
        .end_object();
  }
  out.end_array().key("tier"_key);
  if (decision.tier == routing::Tier::kNone) {
    out.null();
  } else {
    out.string(routing::tier_name(decision.tier));
  }
  out.end_object();
}

void write_findings(JsonWriter& out, const std::vector<routing::PrivacyFinding>& findings) {
  out.begin_array();
  for (const auto& f : findings) {
    out.begin_object().member("detector"_key, f.detector);
    if (!f.field.empty()) {
      out.member("field"_key, f.field);
    }
    out.member("length"_key, count(f.length))
        .member("masked"_key, f.masked)
        .member("offset"_key, count(f.offset))
        .end_object();
  }
  out.end_array();
}

void write_complexity(JsonWriter& out, const RoutingPart& routing) {
  out.begin_object();
  if (routing.feature_contributions) {
    out.key("features"_key).begin_array();
    for (const auto& c : *routing.feature_contributions) {
      out.begin_object()
          .member("contribution"_key, c.contribution)
          .member("feature"_key, c.feature)
          .member("value"_key, c.value)
          .end_object();
    }
    out.end_array();
  }
  out.member("model"_key, routing.complexity_model)
      .member("score"_key, routing.signals.complexity)
      .member("threshold"_key, routing.thresholds.ingress)
      .end_object();
}

void write_remembered(JsonWriter& out, const std::optional<routing::RememberedTier>& remembered) {
  if (!remembered) {
    out.null();
    return;
  }
  out.begin_object()
      .member("age_ms"_key, remembered->age_ms)
      .member("reason"_key, remembered->reason)
      .member("tier"_key, routing::tier_name(remembered->tier))
      .end_object();
}

void write_health(JsonWriter& out, const routing::HealthSnapshot& health) {
  out.begin_object()
      .member("cloud_configured"_key, health.cloud_configured)
      .member("cloud_online"_key, health.cloud_online)
      .member("edge_available"_key, health.edge_available)
      .member("edge_throttled"_key, health.edge_throttled)
      .end_object();
}

void write_privacy(JsonWriter& out, const routing::RouteSignals& signals) {
  out.begin_object().key("findings"_key);
  write_findings(out, signals.privacy);
  out.member("header_local_only"_key, signals.hints.privacy_header)
      .member("key_local_only"_key, signals.hints.key_local_only)
      .key("opaque"_key)
      .begin_array();
  for (const auto& o : signals.opaque) {
    out.begin_object().member("field"_key, o.field).member("kind"_key, o.kind).end_object();
  }
  out.end_array().end_object();
}

void write_signals(JsonWriter& out, const RoutingPart& routing) {
  const routing::RouteSignals& signals = routing.signals;
  const routing::RequestHints& h = signals.hints;
  out.begin_object().key("client"_key);
  write_string_or_null(out, h.client.empty() ? std::nullopt : std::optional(h.client));
  out.key("cloud_only_fields"_key).begin_array();
  for (const auto& field : h.cloud_only_fields) {
    out.string(field);
  }
  out.end_array().key("complexity"_key);
  write_complexity(out, routing);
  out.key("consistency"_key);
  write_remembered(out, signals.remembered);
  out.member("escalation_capped"_key, signals.escalation_capped).key("health"_key);
  write_health(out, routing.health);
  out.member("kind"_key, routing::query_kind_name(signals.kind)).key("latency_budget_ms"_key);
  if (h.latency_budget_ms) {
    out.number(int64_t{*h.latency_budget_ms});
  } else {
    out.null();
  }
  out.key("privacy"_key);
  write_privacy(out, signals);
  out.key("prompt"_key)
      .begin_object()
      .member("chars"_key, count(routing.prompt.chars))
      .member("turns"_key, count(routing.prompt.turns))
      .end_object()
      .key("requested_pattern"_key);
  write_string_or_null(out, h.pattern.empty() ? std::nullopt : std::optional(h.pattern));
  out.key("review"_key).begin_object().key("findings"_key);
  write_findings(out, signals.review);
  out.member("header"_key, h.review_header).end_object().end_object();
}

}  // namespace

void write_json(JsonWriter& out, const RoutingPart& routing) {
  const routing::RouteThresholds& t = routing.thresholds;
  out.begin_object().key("decision"_key);
  write_decision(out, routing.decision);
  out.key("signals"_key);
  write_signals(out, routing);
  out.key("thresholds"_key)
      .begin_object()
      .member("cascade"_key, t.cascade)
      .member("collaborate_entropy"_key, t.collaborate_entropy)
      .member("edge_latency_budget_ms"_key, int64_t{t.edge_latency_budget_ms})
      .member("ingress"_key, t.ingress)
      .member("review_cloud"_key, t.review_cloud)
      .end_object()
      .end_object();
}

void write_json(JsonWriter& out, const ConfidencePart& confidence) {
  const routing::ConfidenceSnapshot& s = confidence.snapshot;
  out.begin_object()
      .member("combined"_key, s.combined)
      .member("mean_entropy"_key, s.mean_entropy)
      .member("mean_logprob"_key, s.mean_logprob)
      .member("mean_margin"_key, s.mean_margin)
      .member("min_logprob"_key, s.min_logprob)
      .member("threshold"_key, confidence.threshold)
      .member("tokens"_key, count(s.tokens))
      .end_object();
}

void write_json(JsonWriter& out, const EscalationPart& escalation) {
  out.begin_object().member("at_token"_key, count(escalation.at_token));
  if (escalation.cloud_confidence) {
    out.key("cloud_confidence"_key);
    write_judged(out, *escalation.cloud_confidence);
  }
  out.member("early_stop"_key, escalation.early_stop)
      .member("edge_tokens_discarded"_key, escalation.edge_tokens_discarded)
      .member("prefix_decision"_key, escalation.prefix_decision)
      .member("reason"_key, escalation.reason)
      .end_object();
}

void write_json(JsonWriter& out, const VerificationPart& verification) {
  out.begin_object();
  if (verification.cloud_confidence) {
    out.key("cloud_confidence"_key);
    write_judged(out, *verification.cloud_confidence);
  }
  if (verification.cloud_reply) {
    out.member("cloud_reply"_key, *verification.cloud_reply);
  }
  if (verification.error) {
    out.member("error"_key, *verification.error);
  }
  out.member("judge"_key, verification.judge)
      .member("status"_key, verification.status)
      .end_object();
}

void write_json(JsonWriter& out, const Revision& revision) {
  out.begin_object()
      .member("from_tier"_key, revision.from_tier)
      .member("id"_key, revision.id)
      .member("reason"_key, revision.reason)
      .member("to_tier"_key, revision.to_tier)
      .end_object();
}

void write_json(JsonWriter& out, const CollaborationPart& collaboration) {
  out.begin_object().key("cloud_failure"_key);
  write_string_or_null(out, collaboration.cloud_failure);
  out.member("cloud_tokens"_key, collaboration.cloud_tokens)
      .member("edge_tokens"_key, collaboration.edge_tokens)
      .member("entropy_threshold"_key, collaboration.entropy_threshold)
      .member("handoffs"_key, int64_t{collaboration.handoffs})
      .key("segments"_key)
      .begin_array();
  for (const auto& segment : collaboration.segments) {
    out.begin_object();
    if (segment.prompt) {
      out.member("cached_prompt_tokens"_key, segment.prompt->cached_prompt_tokens)
          .member("prompt_tokens"_key, segment.prompt->prompt_tokens);
    }
    out.member("tier"_key, segment.tier).member("tokens"_key, segment.tokens).end_object();
  }
  out.end_array().end_object();
}

void write_json(JsonWriter& out, const ReviewPart& review) {
  out.begin_object();
  if (review.poll) {
    out.member("poll"_key, *review.poll);
  }
  if (review.reason) {
    out.member("reason"_key, *review.reason);
  }
  if (review.reviewer) {
    out.member("reviewer"_key, *review.reviewer);
  }
  out.member("status"_key, review.status).member("ticket"_key, review.ticket).end_object();
}

void write_json(JsonWriter& out, const ConsistencyPart& consistency) {
  out.begin_object().member("client"_key, consistency.client);
  if (consistency.without_memory) {
    out.member("overrode"_key, consistency.without_memory->overrode);
  }
  out.member("used"_key, consistency.used);
  if (consistency.without_memory) {
    out.member("would_have_been"_key, consistency.without_memory->would_have_been);
  }
  out.end_object();
}

void write_json(JsonWriter& out, const ShadowPart& shadow) {
  out.begin_object();
  if (shadow.comparison) {
    out.member("agreed"_key, shadow.comparison->agreed).member("f1"_key, shadow.comparison->f1);
  }
  out.member("sampled"_key, shadow.sampled);
  if (shadow.status) {
    out.member("status"_key, *shadow.status);
  }
  out.member("would_have_been"_key, shadow.would_have_been).end_object();
}

}  // namespace tandem::server
