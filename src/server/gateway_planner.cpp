// The request planner: what the router decides for a request (or the model the client named),
// turned into the steps that answer it, the tiers it may fall back to, and what its end must
// record. gateway.cpp runs the plan.

#include <algorithm>

#include "routing/query_cluster.h"
#include "server/gateway_traces.h"
#include "server/gateway_util.h"
#include "server/request_plan.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using routing::Pattern;
using Step = PlanStep;

// The text of a message list the way the router reads it: the last user message, the system
// prompt, and everything (what would be sent out) for the scans.
struct PromptText {
  const nlohmann::json* body = nullptr;  // the client's body as the cloud receives it
  std::string all;
  std::string system;
  std::string last_user;
  std::vector<std::string_view> earlier_user;  // the user messages before the last, in order
  size_t turns = 0;
  size_t content_chars = 0;  // the messages' text without the line breaks `all` joins them with
};

PromptText prompt_text(const CompletionRequest& request) {
  PromptText text;
  // A Responses request is scanned as the client wrote it: a native upstream receives it so,
  // items the chat translation leaves out included.
  text.body = request.responses_body.is_null() ? &request.cloud_body : &request.responses_body;
  if (request.kind == upstream::ApiKind::kCompletion) {
    text.all = request.prompt;
    text.last_user = request.prompt;
    text.turns = 1;
    text.content_chars = request.prompt.size();
    return text;
  }
  const std::string* last_user = nullptr;
  for (const auto& m : request.messages) {
    if (!text.all.empty()) {
      text.all += '\n';
    }
    text.all += m.content;
    text.content_chars += m.content.size();
    if (m.role == "system" || m.role == "developer") {
      if (!text.system.empty()) {
        text.system += '\n';  // two messages' sentences do not run together
      }
      text.system += m.content;
    } else {
      ++text.turns;
      if (m.role == "user") {
        if (last_user != nullptr) {
          text.earlier_user.emplace_back(*last_user);  // a one-message request allocates none
        }
        last_user = &m.content;
      }
    }
  }
  if (last_user != nullptr) {
    text.last_user = *last_user;
  }
  return text;
}

// The error of a decision no tier may answer. The client's to fix (400) when the request needs
// a field only the cloud provides but may not leave the device, or carries content the privacy
// scan cannot read under opaque_content: refuse; else no tier is available (503).
ApiError no_tier_error(const routing::Decision& decision, const CompletionRequest& request) {
  std::vector<std::string> details;
  for (const auto& r : decision.reasons) {
    details.push_back(r.detail);
  }
  for (const auto& r : decision.reasons) {
    if (r.code == routing::ReasonCode::kPrivacyNeedsCloud) {
      const std::string& field = request.cloud_only_fields.front();
      return invalid_request("the request cannot be answered: " + join(details, "; "),
                             field.substr(0, field.find('=')), "private_data_needs_cloud");
    }
    if (r.code == routing::ReasonCode::kPrivacyOpaqueRefused) {
      return invalid_request("the request cannot be answered: " + join(details, "; "), "",
                             "opaque_content_refused");
    }
  }
  return unavailable("no tier can answer: " + join(details, "; "),
                     decision.cloud_allowed ? "no_tier" : "edge_unavailable_for_private_data");
}

// What the router reads; views into `text`, which must outlive it.
routing::RouteInput route_input(const CompletionRequest& request, const RequestContext& context,
                                const PromptText& text) {
  routing::RouteInput input;
  input.text = text.all;
  input.document = text.body;
  input.prompt.system = text.system;
  input.prompt.last_user = text.last_user;
  input.prompt.total_chars = text.content_chars;
  input.prompt.turns = std::max<size_t>(text.turns, 1);
  input.prompt.earlier_user = text.earlier_user;
  input.hints = context.hints;
  input.hints.cloud_only_fields = request.cloud_only_fields;
  if (input.hints.client.empty()) {
    input.hints.client = request.user;
  }
  return input;
}

bool edge_first(Step step) {
  return step == Step::kEdge || step == Step::kCascade || step == Step::kSpeculative ||
         step == Step::kCollaborate;
}

// The step that carries out a pattern; kNone has none (the caller answers with an error).
Step step_for(Pattern pattern) {
  switch (pattern) {
    case Pattern::kCloud:
      return Step::kCloud;
    case Pattern::kCascade:
      return Step::kCascade;
    case Pattern::kSpeculative:
      return Step::kSpeculative;
    case Pattern::kCollaborate:
      return Step::kCollaborate;
    case Pattern::kReview:
      return Step::kReview;
    case Pattern::kEdge:
    case Pattern::kNone:
      break;
  }
  return Step::kEdge;
}

// Whether the tier this routed decision chose is a preference worth remembering for the
// client's similar queries: rules (privacy, health, latency, capability) are not.
bool worth_remembering(const routing::Decision& decision) {
  return routing::is_preference(decision.reasons.front().code);
}

}  // namespace

json Gateway::explain_route(const CompletionRequest& request, const RequestContext& context,
                            bool detailed) const {
  const PromptText text = prompt_text(request);
  const routing::RouteInput input = route_input(request, context, text);
  routing::RouteSignals signals = router_->signals(input);
  if (auto* gaming = monitors_->gaming(); gaming != nullptr && !input.hints.client.empty()) {
    signals.escalation_capped = gaming->escalation_capped(
        gaming_identity(input.hints.client, !config_.server.api_keys.empty()), unix_ms());
  }
  if (config_.routing.consistency.enabled && !input.hints.client.empty()) {
    signals.remembered =
        remembered_tier(input.hints.client, routing::query_cluster_keys(text.last_user));
  }
  const routing::HealthSnapshot h = health();
  routing::Decision decision = router_->decide(signals, h);
  if (shadow_applies(config_.routing.shadow, signals, decision)) {
    decision = shadow_decision(decision);
  }
  return router_->explain(input, signals, decision, h, detailed);
}

net::awaitable<std::optional<ApiError>> Gateway::plan_request(CompletionRequest& request,
                                                              const RequestContext& context,
                                                              ResponseSink& sink, Plan& plan,
                                                              DecisionRecord& record,
                                                              store::TraceRecord& trace) {
  if (request.model == kRoutedModel) {
    auto refused = co_await plan_routed(request, context, sink, plan, record, trace);
    co_return refused;
  }
  if (!edge_name_.empty() && request.model == edge_name_) {
    plan_edge_model(request, context, plan, record, trace);
    co_return std::nullopt;
  }
  const bool served_by_cloud = std::any_of(upstreams_.begin(), upstreams_.end(),
                                           [&](const auto& u) { return u->serves(request.model); });
  if (served_by_cloud) {
    co_return plan_cloud_model(request, context, plan, record, trace);
  }
  std::vector<std::string> names;
  for (const auto& m : models()) {
    names.push_back(m.id);
  }
  plan.traced = false;
  co_return api_error_from(
      make_error(ErrorCode::kNotFound,
                 "model '" + request.model + "' does not exist; available: " + join(names)));
}

net::awaitable<std::optional<ApiError>> Gateway::plan_routed(CompletionRequest& request,
                                                             const RequestContext& context,
                                                             ResponseSink& sink, Plan& plan,
                                                             DecisionRecord& record,
                                                             store::TraceRecord& trace) {
  const PromptText text = prompt_text(request);
  const routing::RouteInput input = route_input(request, context, text);
  routing::RouteSignals signals = router_->signals(input);
  plan.client = input.hints.client;
  record.client = plan.client;
  if (config_.operations.log_prompts) {
    plan.logged_prompt = text.last_user;
  }
  if (auto* gaming = monitors_->gaming(); gaming != nullptr && !plan.client.empty()) {
    signals.escalation_capped = gaming->escalation_capped(
        gaming_identity(plan.client, !config_.server.api_keys.empty()), unix_ms());
  }
  plan.kind = signals.kind;
  plan.complexity = signals.complexity;
  const routing::HealthSnapshot h = health();
  const bool use_memory = config_.routing.consistency.enabled && !plan.client.empty();
  std::optional<routing::Decision> without_memory;
  if (use_memory) {
    plan.cluster_keys = routing::query_cluster_keys(text.last_user);
    auto remembered = co_await recall(plan.client, plan.cluster_keys);
    signals.remembered = std::move(remembered);
    if (signals.remembered) {
      auto plain = signals;
      plain.remembered.reset();
      without_memory = router_->decide(plain, h);
    }
  }
  routing::Decision decision = router_->decide(signals, h);
  // Shadow mode: the cloud answers what a preference would have sent anywhere.
  const bool shadowed = shadow_ && shadow_applies(config_.routing.shadow, signals, decision);
  const std::string would_have_been = routing::pattern_name(decision.pattern);
  if (shadowed) {
    decision = shadow_decision(decision);
  }
  if (shadow_) {
    shadow_->count(std::string(routing::query_kind_name(plan.kind)), shadowed, unix_ms());
  }
  record_decision(input, signals, decision, h, record, trace);
  plan.cloud_allowed = decision.cloud_allowed;
  if (use_memory) {
    ConsistencyPart& consistency = record.consistency.emplace();
    consistency.client = plan.client;
    consistency.used = decision.from_memory;
    if (decision.from_memory && without_memory) {
      consistency.without_memory = ConsistencyPart::Override{
          without_memory->pattern != decision.pattern || without_memory->tier != decision.tier,
          routing::pattern_name(without_memory->pattern)};
    }
    plan.remember = worth_remembering(decision);
  }
  if (decision.pattern == Pattern::kNone) {
    co_return no_tier_error(decision, request);
  }
  plan.steps = routed_steps(decision, request, plan.cloud_allowed, record);
  if (shadowed) {
    const bool sampled = routing::shadow_sampled(context.request_id, config_.routing.shadow.sample);
    auto executor = co_await net::asio::this_coro::executor;
    plan.shadow =
        std::make_unique<ShadowRequest>(*this, *shadow_, request, plan.kind, plan.complexity,
                                        record, sink, sampled, would_have_been, executor);
  }
  co_return std::nullopt;
}

void Gateway::record_decision(const routing::RouteInput& input,
                              const routing::RouteSignals& signals,
                              const routing::Decision& decision, const routing::HealthSnapshot& h,
                              DecisionRecord& record, store::TraceRecord& trace) const {
  record.routing = router_->explanation(input, signals, decision, h, false);
  // Always: the metrics' reason and privacy pins and the gaming monitor read them from the trace
  // record, whether or not a trace is kept.
  trace_signals(trace, signals, reason_codes(decision));
  record.pattern = routing::pattern_name(decision.pattern);
  for (const auto& r : decision.reasons) {
    record.reasons.push_back(r.detail);
  }
  if (decision.notice) {
    record.degraded = *decision.notice;
  }
}

std::vector<PlanStep> Gateway::routed_steps(const routing::Decision& decision,
                                            const CompletionRequest& request, bool cloud_allowed,
                                            DecisionRecord& record) const {
  std::vector<Step> steps = {step_for(decision.pattern)};
  if (request.structured() && edge_first(steps.front()) && steps.front() != Step::kEdge) {
    // Tool calls and schema-bound answers are parsed from one tier's answer: the patterns
    // that judge or merge text across tiers do not apply, the edge answers on its own.
    record.reasons.push_back(std::string("tools or response_format: the edge answers alone, not ") +
                             routing::pattern_name(decision.pattern));
    steps = {Step::kEdge};
  }
  const bool has_cloud = !cloud_model().empty();
  if (edge_first(steps.front()) && cloud_allowed && config_.routing.edge_to_cloud && has_cloud) {
    steps.push_back(Step::kCloud);
  } else if (steps.front() == Step::kCloud && config_.routing.cloud_to_edge && engine_ &&
             request.cloud_only_fields.empty()) {
    steps.push_back(Step::kEdge);
  }
  return steps;
}

void Gateway::plan_edge_model(const CompletionRequest& request, const RequestContext& context,
                              Plan& plan, DecisionRecord& record, store::TraceRecord& trace) const {
  record.pattern = "edge";
  record.reasons.push_back("model '" + request.model + "' is the edge model");
  plan.steps = {Step::kEdge};
  if (!keep_traces_) {
    trace.reason_codes = explicit_model_reasons(false);  // the metrics' reason
    return;
  }
  // What the router would have read, for calibration and replay.
  const PromptText text = prompt_text(request);
  const routing::RouteSignals signals = router_->signals(route_input(request, context, text));
  trace_signals(trace, signals, explicit_model_reasons(false));
}

std::optional<ApiError> Gateway::plan_cloud_model(CompletionRequest& request,
                                                  const RequestContext& context, Plan& plan,
                                                  DecisionRecord& record,
                                                  store::TraceRecord& trace) const {
  record.pattern = "cloud";
  record.reasons.push_back("model '" + request.model + "' is a cloud model");
  // Data that must not leave the device does not, whichever model the client named.
  const PromptText text = prompt_text(request);
  const routing::RouteInput input = route_input(request, context, text);
  // The classifier's features and score of a named model's request only go into its trace:
  // without one, the privacy signals alone decide whether it may leave.
  routing::RouteSignals signals =
      keep_traces_ ? router_->signals(input) : router_->privacy_signals(input);
  const routing::HealthSnapshot h = health();
  const auto pinned = routing::privacy_decision(router_->config(), signals, h);
  trace_signals(trace, signals, explicit_model_reasons(true, pinned));
  if (!pinned) {
    plan.steps = {Step::kCloud};
    if (config_.routing.cloud_to_edge && engine_ && request.cloud_only_fields.empty()) {
      plan.steps.push_back(Step::kEdge);
    }
    return std::nullopt;
  }
  plan.cloud_allowed = false;
  if (!keep_traces_) {
    signals = router_->signals(input);  // the explanation shows every signal
  }
  record.routing = router_->explanation(input, signals, *pinned, h, false);
  for (const auto& r : pinned->reasons) {
    record.reasons.push_back(r.detail);
  }
  if (pinned->pattern == Pattern::kNone) {
    record.pattern = "none";
    return no_tier_error(*pinned, request);
  }
  record.pattern = "edge";
  record.degraded =
      "the request carries data that must not leave the device; the on-device model '" +
      edge_name_ + "' answered instead of '" + request.model + "'";
  request.model = kRoutedModel;  // the cloud model's name means nothing to the edge
  plan.steps = {Step::kEdge};
  return std::nullopt;
}

}  // namespace tandem::server
