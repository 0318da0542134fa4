#include "routing/egress_rules.h"

#include "routing/privacy_json.h"

namespace tandem::routing {

std::optional<EgressVerdict> judge_egress(const PrivacyScanner& scanner, const EgressRules& rules,
                                          std::string_view bytes, bool may_leave) {
  if (!may_leave) {
    return EgressVerdict{"local_only", "the routing decision keeps this request on the device"};
  }
  if (bytes.empty()) {
    return std::nullopt;
  }
  auto scanned = scan_json(scanner, bytes);
  if (!scanned) {
    return EgressVerdict{"unreadable_body",
                         "the body cannot be scanned: " + scanned.error().message};
  }
  if (rules.refuse_private && !scanned->findings.empty()) {
    return EgressVerdict{"private_data", "the body carries data that must not leave the device: " +
                                             describe_fields(scanned->findings)};
  }
  if (!rules.send_opaque && !scanned->opaque.empty()) {
    return EgressVerdict{"opaque_content",
                         "the body carries content the privacy scan cannot read (" +
                             describe_opaque(scanned->opaque) +
                             ") and routing.privacy.opaque_content keeps it on the device"};
  }
  return std::nullopt;
}

}  // namespace tandem::routing
