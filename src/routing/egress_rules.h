#pragma once
// What may leave the device, judged from the bytes alone: the decision of the gateway's egress
// guard (server/egress_guard.h) before it records the audit row, as a pure function, so that it
// can be tested and fuzzed without a network. The guard calls exactly this.

#include <optional>
#include <string>
#include <string_view>

#include "routing/privacy_scanner.h"

namespace tandem::routing {

struct EgressRules {
  bool refuse_private = true;  // routing.privacy.enabled: a finding keeps the body home
  bool send_opaque = false;    // routing.privacy.opaque_content is allow
};

struct EgressVerdict {
  // "local_only", "private_data", "opaque_content" or "unreadable_body" (upstream/egress.h).
  std::string code;
  std::string message;  // names detectors and fields, never a value
};

struct EgressJudgement {
  std::optional<EgressVerdict> refusal;  // nullopt: the body may leave
  // The scan found private data (allowed to leave only where routing.privacy is off): what an
  // audit that keeps redacted bodies has to mask. False: the body is stored as it is.
  bool has_findings = false;
};

// The verdict on one body. `may_leave` is the routing decision's: false refuses any body. An
// empty body (a bodiless GET) carries nothing to scan.
EgressJudgement judge_egress_body(const PrivacyScanner& scanner, const EgressRules& rules,
                                  std::string_view bytes, bool may_leave);

// judge_egress_body's refusal alone.
std::optional<EgressVerdict> judge_egress(const PrivacyScanner& scanner, const EgressRules& rules,
                                          std::string_view bytes, bool may_leave);

}  // namespace tandem::routing
