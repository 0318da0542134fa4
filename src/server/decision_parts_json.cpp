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
      .member("cloud_allowed", decision.cloud_allowed)
      .member("from_memory", decision.from_memory)
      .key("notice");
  write_string_or_null(out, decision.notice);
  out.member("pattern", routing::pattern_name(decision.pattern)).key("reasons").begin_array();
  for (const auto& r : decision.reasons) {
    out.begin_object()
        .member("code", routing::reason_code_name(r.code))
        .member("detail", r.detail)
        .end_object();
  }
  out.end_array().key("tier");
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
    out.begin_object().member("detector", f.detector);
    if (!f.field.empty()) {
      out.member("field", f.field);
    }
    out.member("length", count(f.length))
        .member("masked", f.masked)
        .member("offset", count(f.offset))
        .end_object();
  }
  out.end_array();
}

void write_complexity(JsonWriter& out, const RoutingPart& routing) {
  out.begin_object();
  if (routing.feature_contributions) {
    out.key("features").begin_array();
    for (const auto& c : *routing.feature_contributions) {
      out.begin_object()
          .member("contribution", c.contribution)
          .member("feature", c.feature)
          .member("value", c.value)
          .end_object();
    }
    out.end_array();
  }
  out.member("model", routing.complexity_model)
      .member("score", routing.signals.complexity)
      .member("threshold", routing.thresholds.ingress)
      .end_object();
}

void write_remembered(JsonWriter& out, const std::optional<routing::RememberedTier>& remembered) {
  if (!remembered) {
    out.null();
    return;
  }
  out.begin_object()
      .member("age_ms", remembered->age_ms)
      .member("reason", remembered->reason)
      .member("tier", routing::tier_name(remembered->tier))
      .end_object();
}

void write_health(JsonWriter& out, const routing::HealthSnapshot& health) {
  out.begin_object()
      .member("cloud_configured", health.cloud_configured)
      .member("cloud_online", health.cloud_online)
      .member("edge_available", health.edge_available)
      .member("edge_throttled", health.edge_throttled)
      .end_object();
}

void write_privacy(JsonWriter& out, const routing::RouteSignals& signals) {
  out.begin_object().key("findings");
  write_findings(out, signals.privacy);
  out.member("header_local_only", signals.hints.privacy_header)
      .member("key_local_only", signals.hints.key_local_only)
      .key("opaque")
      .begin_array();
  for (const auto& o : signals.opaque) {
    out.begin_object().member("field", o.field).member("kind", o.kind).end_object();
  }
  out.end_array().end_object();
}

void write_signals(JsonWriter& out, const RoutingPart& routing) {
  const routing::RouteSignals& signals = routing.signals;
  const routing::RequestHints& h = signals.hints;
  out.begin_object().key("client");
  write_string_or_null(out, h.client.empty() ? std::nullopt : std::optional(h.client));
  out.key("cloud_only_fields").begin_array();
  for (const auto& field : h.cloud_only_fields) {
    out.string(field);
  }
  out.end_array().key("complexity");
  write_complexity(out, routing);
  out.key("consistency");
  write_remembered(out, signals.remembered);
  out.member("escalation_capped", signals.escalation_capped).key("health");
  write_health(out, routing.health);
  out.member("kind", routing::query_kind_name(signals.kind)).key("latency_budget_ms");
  if (h.latency_budget_ms) {
    out.number(int64_t{*h.latency_budget_ms});
  } else {
    out.null();
  }
  out.key("privacy");
  write_privacy(out, signals);
  out.key("prompt")
      .begin_object()
      .member("chars", count(routing.prompt.chars))
      .member("turns", count(routing.prompt.turns))
      .end_object()
      .key("requested_pattern");
  write_string_or_null(out, h.pattern.empty() ? std::nullopt : std::optional(h.pattern));
  out.key("review").begin_object().key("findings");
  write_findings(out, signals.review);
  out.member("header", h.review_header).end_object().end_object();
}

}  // namespace

void write_json(JsonWriter& out, const RoutingPart& routing) {
  const routing::RouteThresholds& t = routing.thresholds;
  out.begin_object().key("decision");
  write_decision(out, routing.decision);
  out.key("signals");
  write_signals(out, routing);
  out.key("thresholds")
      .begin_object()
      .member("cascade", t.cascade)
      .member("collaborate_entropy", t.collaborate_entropy)
      .member("edge_latency_budget_ms", int64_t{t.edge_latency_budget_ms})
      .member("ingress", t.ingress)
      .member("review_cloud", t.review_cloud)
      .end_object()
      .end_object();
}

void write_json(JsonWriter& out, const ConfidencePart& confidence) {
  const routing::ConfidenceSnapshot& s = confidence.snapshot;
  out.begin_object()
      .member("combined", s.combined)
      .member("mean_entropy", s.mean_entropy)
      .member("mean_logprob", s.mean_logprob)
      .member("mean_margin", s.mean_margin)
      .member("min_logprob", s.min_logprob)
      .member("threshold", confidence.threshold)
      .member("tokens", count(s.tokens))
      .end_object();
}

void write_json(JsonWriter& out, const EscalationPart& escalation) {
  out.begin_object().member("at_token", count(escalation.at_token));
  if (escalation.cloud_confidence) {
    out.key("cloud_confidence");
    write_judged(out, *escalation.cloud_confidence);
  }
  out.member("early_stop", escalation.early_stop)
      .member("edge_tokens_discarded", escalation.edge_tokens_discarded)
      .member("prefix_decision", escalation.prefix_decision)
      .member("reason", escalation.reason)
      .end_object();
}

void write_json(JsonWriter& out, const VerificationPart& verification) {
  out.begin_object();
  if (verification.cloud_confidence) {
    out.key("cloud_confidence");
    write_judged(out, *verification.cloud_confidence);
  }
  if (verification.cloud_reply) {
    out.member("cloud_reply", *verification.cloud_reply);
  }
  if (verification.error) {
    out.member("error", *verification.error);
  }
  out.member("judge", verification.judge).member("status", verification.status).end_object();
}

void write_json(JsonWriter& out, const Revision& revision) {
  out.begin_object()
      .member("from_tier", revision.from_tier)
      .member("id", revision.id)
      .member("reason", revision.reason)
      .member("to_tier", revision.to_tier)
      .end_object();
}

void write_json(JsonWriter& out, const CollaborationPart& collaboration) {
  out.begin_object().key("cloud_failure");
  write_string_or_null(out, collaboration.cloud_failure);
  out.member("cloud_tokens", collaboration.cloud_tokens)
      .member("edge_tokens", collaboration.edge_tokens)
      .member("entropy_threshold", collaboration.entropy_threshold)
      .member("handoffs", int64_t{collaboration.handoffs})
      .key("segments")
      .begin_array();
  for (const auto& segment : collaboration.segments) {
    out.begin_object();
    if (segment.prompt) {
      out.member("cached_prompt_tokens", segment.prompt->cached_prompt_tokens)
          .member("prompt_tokens", segment.prompt->prompt_tokens);
    }
    out.member("tier", segment.tier).member("tokens", segment.tokens).end_object();
  }
  out.end_array().end_object();
}

void write_json(JsonWriter& out, const ReviewPart& review) {
  out.begin_object();
  if (review.poll) {
    out.member("poll", *review.poll);
  }
  if (review.reason) {
    out.member("reason", *review.reason);
  }
  if (review.reviewer) {
    out.member("reviewer", *review.reviewer);
  }
  out.member("status", review.status).member("ticket", review.ticket).end_object();
}

void write_json(JsonWriter& out, const ConsistencyPart& consistency) {
  out.begin_object().member("client", consistency.client);
  if (consistency.without_memory) {
    out.member("overrode", consistency.without_memory->overrode);
  }
  out.member("used", consistency.used);
  if (consistency.without_memory) {
    out.member("would_have_been", consistency.without_memory->would_have_been);
  }
  out.end_object();
}

void write_json(JsonWriter& out, const ShadowPart& shadow) {
  out.begin_object();
  if (shadow.comparison) {
    out.member("agreed", shadow.comparison->agreed).member("f1", shadow.comparison->f1);
  }
  out.member("sampled", shadow.sampled);
  if (shadow.status) {
    out.member("status", *shadow.status);
  }
  out.member("would_have_been", shadow.would_have_been).end_object();
}

}  // namespace tandem::server
