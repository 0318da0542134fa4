#pragma once
// The gateway's egress guard (upstream/egress.h): every body any upstream of this gateway sends,
// whatever its purpose, passes inspect() with the exact bytes about to leave. In order:
//   1. a request the routing keeps on the device (privacy finding, header, local-only key,
//      opaque content under edge_only) sends nothing at all ("local_only");
//   2. the bytes are read as JSON and every string, key and number is scanned with the privacy
//      detectors and the configured rules (routing/privacy_json.h): a finding refuses the send
//      ("private_data") unless routing.privacy.enabled is false; content the detectors cannot
//      read refuses it unless routing.privacy.opaque_content is allow ("opaque_content"); bytes
//      that are not JSON cannot be scanned and are refused ("unreadable_body");
//   3. with operations.audit on, the audit row — size and sha256 of these bytes and, per
//      operations.audit.content, the body redacted or whole — is stored before the bytes may
//      go; with operations.audit.required a row that cannot be stored (writer queue full,
//      database error) refuses the send ("audit_unavailable").
// Every send and every refusal is counted (tandem_egress_sends_total{purpose},
// tandem_egress_refusals_total{purpose,reason}).
//
// Thread-safety: inspect() may run on any number of coroutines at once; the guard is immutable
// after construction but for its counters (atomics).

#include <array>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "config/config.h"
#include "routing/egress_rules.h"
#include "routing/privacy_scanner.h"
#include "store/trace_writer.h"
#include "telemetry/metrics.h"
#include "upstream/egress.h"

namespace tandem::server {

inline constexpr const char* kEgressSendsMetric = "tandem_egress_sends_total";
inline constexpr const char* kEgressRefusalsMetric = "tandem_egress_refusals_total";
inline constexpr const char* kEgressPurposes[] = {"answer", "verify",     "continue", "shadow",
                                                  "canary", "embeddings", "health"};
inline constexpr const char* kEgressRefusalReasons[] = {
    "local_only", "private_data", "opaque_content", "unreadable_body", "audit_unavailable"};

class GatewayEgressGuard final : public upstream::EgressGuard {
 public:
  // `scanner`: routing.privacy's rules with every configured detector on, even where the
  // router's privacy rule is off (the audit still masks what it finds). `audit`: the writer of
  // the audit rows, null when operations.audit is off.
  GatewayEgressGuard(const config::GatewayConfig& config, routing::PrivacyScanner scanner,
                     std::shared_ptr<store::TraceWriter> audit,
                     telemetry::MetricsRegistry& metrics);

 protected:
  net::awaitable<std::optional<upstream::EgressRefusal>> inspect(
      const std::string& bytes, const upstream::EgressSend& send) override;

 private:
  // Stores the audit row of `bytes` before they leave; false when it could not be stored.
  // `has_findings`: the guard's scan found private data, which a redacted row masks.
  net::awaitable<bool> record(const std::string& bytes, const upstream::EgressSend& send,
                              bool has_findings);
  upstream::EgressRefusal refuse(const upstream::EgressSend& send, std::string code,
                                 std::string message);
  // The sends counter of `purpose`: resolved once per known purpose at construction, since a
  // registry lookup (labels built, sorted and validated under its lock) costs more than the
  // rest of the count.
  telemetry::Counter& sends_counter(const std::string& purpose);
  // The registry's lookup behind it (for the purposes outside kEgressPurposes).
  telemetry::Counter& registered_sends_counter(std::string_view purpose);

  routing::EgressRules rules_;
  bool audit_required_;
  std::string audit_content_;
  routing::PrivacyScanner scanner_;
  std::shared_ptr<store::TraceWriter> audit_;
  telemetry::MetricsRegistry& metrics_;
  std::array<telemetry::Counter*, std::size(kEgressPurposes)> sends_{};
};

}  // namespace tandem::server
