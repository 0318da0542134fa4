#pragma once
// The router: computes a request's signals (privacy scan, review rules, prompt features and
// the complexity classifier) and applies the policy. Built once from the configuration at
// start-up (patterns compiled, weights loaded); afterwards immutable and safe to share between
// threads. No I/O on the request path: the consistency memory is looked up by the caller and
// handed in as a signal.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "routing/complexity_model.h"
#include "routing/policy.h"
#include "routing/privacy_scanner.h"
#include "routing/prompt_features.h"
#include "routing/route_explanation.h"

namespace tandem::routing {

// What the router reads of a request.
struct RouteInput {
  PromptView prompt;      // views into the request's messages
  std::string_view text;  // every message's text, for the review rules (and privacy without body)
  // The request body as a cloud upstream would receive it: the privacy scan reads every field
  // of it (privacy_json.h), as the egress guard does. `document` (parsed, as the gateway has
  // it) or else `body` (JSON text); with neither the privacy scan reads `text`.
  const nlohmann::json* document = nullptr;
  std::string_view body;
  RequestHints hints;
};

class Router {
 public:
  static Result<std::shared_ptr<const Router>> create(const config::RoutingConfig& config);

  RouteSignals signals(const RouteInput& input) const;
  // Only what privacy_decision() reads: the hints, the privacy findings and the opaque content,
  // without the review scan and the classifier (kind, features and complexity stay default).
  RouteSignals privacy_signals(const RouteInput& input) const;
  Decision decide(const RouteSignals& signals, const HealthSnapshot& health) const {
    return routing::decide(config_, signals, health);
  }

  // The decision and every signal behind it, for `tandem route --explain`, /v1/tandem/route
  // and the decision record. `detailed` adds the classifier's feature contributions.
  RouteExplanation explanation(const RouteInput& input, const RouteSignals& signals,
                               const Decision& decision, const HealthSnapshot& health,
                               bool detailed) const;
  // The same as JSON: to_json(explanation(...)).
  nlohmann::json explain(const RouteInput& input, const RouteSignals& signals,
                         const Decision& decision, const HealthSnapshot& health,
                         bool detailed) const;

  const config::RoutingConfig& config() const { return config_; }
  const ComplexityModel& model() const { return *model_; }

 private:
  // The privacy findings of the body (else the text); fills `opaque` from the body.
  std::vector<PrivacyFinding> privacy_signal(const RouteInput& input,
                                             std::vector<OpaqueContent>& opaque) const;

  Router(config::RoutingConfig config, PrivacyScanner privacy, std::optional<PrivacyScanner> review,
         std::shared_ptr<const ComplexityModel> model);

  config::RoutingConfig config_;
  PrivacyScanner privacy_;
  std::optional<PrivacyScanner> review_;  // only when review rules are configured
  std::shared_ptr<const ComplexityModel> model_;
};

// The privacy scanner's rules for the `routing.privacy` configuration.
PrivacyRules privacy_rules(const config::PrivacyConfig& config);

// The classifier threshold that sent `cloud_share` of its training traffic to the cloud (from
// the weights file's metadata, interpolated between recorded shares); 0 gates nothing and 1
// everything. Fails when the file records none, or when the share lies outside those recorded.
Result<double> threshold_for_share(const ComplexityModel& model, double cloud_share);

nlohmann::json to_json(const Decision& decision);
nlohmann::json to_json(const std::vector<PrivacyFinding>& findings);
nlohmann::json to_json(const std::vector<OpaqueContent>& opaque);

}  // namespace tandem::routing
