#include "routing/egress_rules.h"

#include "routing/privacy_json.h"

namespace tandem::routing {

EgressJudgement judge_egress_body(const PrivacyScanner& scanner, const EgressRules& rules,
                                  std::string_view bytes, bool may_leave) {
  if (!may_leave) {
    return {EgressVerdict{"local_only", "the routing decision keeps this request on the device"}};
  }
  if (bytes.empty()) {
    return {};
  }
  auto scanned = scan_json(scanner, bytes);
  if (!scanned) {
    return {
        EgressVerdict{"unreadable_body", "the body cannot be scanned: " + scanned.error().message}};
  }
  const bool has_findings = !scanned->findings.empty();
  if (rules.refuse_private && has_findings) {
    return {EgressVerdict{"private_data", "the body carries data that must not leave the device: " +
                                              describe_fields(scanned->findings)},
            true};
  }
  if (!rules.send_opaque && !scanned->opaque.empty()) {
    return {EgressVerdict{"opaque_content",
                          "the body carries content the privacy scan cannot read (" +
                              describe_opaque(scanned->opaque) +
                              ") and routing.privacy.opaque_content keeps it on the device"},
            has_findings};
  }
  return {std::nullopt, has_findings};
}

std::optional<EgressVerdict> judge_egress(const PrivacyScanner& scanner, const EgressRules& rules,
                                          std::string_view bytes, bool may_leave) {
  return judge_egress_body(scanner, rules, bytes, may_leave).refusal;
}

}  // namespace tandem::routing
