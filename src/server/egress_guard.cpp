#include "server/egress_guard.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "net/async_queue.h"
#include "routing/egress_rules.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

using nlohmann::json;
using upstream::EgressRefusal;
using upstream::EgressSend;

// Masks every finding in every string of `value`: "[REDACTED:email]". Keys stay (they are the
// API's field names; a key holding private data refused the send before any audit).
void redact(json& value, const routing::PrivacyScanner& scanner, store::AuditRecord& audit) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    auto findings = scanner.scan(text);
    if (findings.empty()) {
      return;
    }
    std::string out;
    size_t at = 0;
    for (const auto& f : findings) {
      if (f.offset < at) {
        continue;  // overlaps a masked span (two detectors on the same bytes)
      }
      out.append(text, at, f.offset - at);
      out += "[REDACTED:" + f.detector + "]";
      at = f.offset + f.length;
      ++audit.redactions;
      auto& names = audit.redacted_detectors;
      if (std::find(names.begin(), names.end(), f.detector) == names.end()) {
        names.push_back(f.detector);
      }
    }
    out.append(text, std::min(at, text.size()), std::string::npos);
    value = std::move(out);
  } else if (value.is_array() || value.is_object()) {
    for (auto& item : value) {
      redact(item, scanner, audit);
    }
  }
}

store::AuditRecord audit_row(const std::string& bytes, const EgressSend& send,
                             const std::string& mode, const routing::PrivacyScanner& scanner,
                             bool has_findings) {
  store::AuditRecord audit;
  audit.unix_ms = unix_ms();
  audit.request_id = send.request_id;
  audit.client = send.client;
  audit.upstream = send.upstream;
  audit.model = send.model;
  audit.purpose = send.purpose;
  audit.bytes = static_cast<int64_t>(bytes.size());
  audit.sha256 = config::sha256_hex(bytes);
  audit.content_mode = mode;
  // Redacted with nothing to redact (the guard's scan found nothing): the body as sent.
  if (mode == "full" || (mode == "redacted" && !has_findings)) {
    audit.content = bytes.substr(0, store::kMaxAuditContentBytes);
  } else if (mode == "redacted") {
    json parsed = json::parse(bytes, nullptr, false);  // JSON: the guard has read it already
    redact(parsed, scanner, audit);
    audit.content = parsed.dump(-1, ' ', false, json::error_handler_t::replace)
                        .substr(0, store::kMaxAuditContentBytes);
  }
  return audit;
}

}  // namespace

GatewayEgressGuard::GatewayEgressGuard(const config::GatewayConfig& config,
                                       routing::PrivacyScanner scanner,
                                       std::shared_ptr<store::TraceWriter> audit,
                                       telemetry::MetricsRegistry& metrics)
    : rules_{config.routing.privacy.enabled, config.routing.privacy.opaque_content == "allow"},
      audit_required_(config.operations.audit.required),
      audit_content_(config.operations.audit.content),
      scanner_(std::move(scanner)),
      audit_(std::move(audit)),
      metrics_(metrics) {
  for (size_t i = 0; i < sends_.size(); ++i) {
    sends_[i] = &registered_sends_counter(kEgressPurposes[i]);
  }
}

telemetry::Counter& GatewayEgressGuard::registered_sends_counter(std::string_view purpose) {
  return metrics_.counter(kEgressSendsMetric,
                          "Bodies the egress guard let leave the device, by purpose",
                          {{"purpose", std::string(purpose)}});
}

telemetry::Counter& GatewayEgressGuard::sends_counter(const std::string& purpose) {
  for (size_t i = 0; i < sends_.size(); ++i) {
    if (purpose == kEgressPurposes[i]) {
      return *sends_[i];
    }
  }
  return registered_sends_counter(purpose);
}

EgressRefusal GatewayEgressGuard::refuse(const EgressSend& send, std::string code,
                                         std::string message) {
  metrics_
      .counter(kEgressRefusalsMetric,
               "Bodies the egress guard kept on the device, by purpose and reason",
               {{"purpose", send.purpose}, {"reason", code}})
      .add();
  log_event(LogLevel::kWarn, "egress", "refused",
            {{"request_id", send.request_id},
             {"upstream", send.upstream},
             {"purpose", send.purpose},
             {"reason", code},
             {"message", message}});
  return EgressRefusal{std::move(code), std::move(message)};
}

net::awaitable<std::optional<EgressRefusal>> GatewayEgressGuard::inspect(const std::string& bytes,
                                                                         const EgressSend& send) {
  auto judgement = routing::judge_egress_body(scanner_, rules_, bytes, send.may_leave);
  if (judgement.refusal) {
    co_return refuse(send, std::move(judgement.refusal->code),
                     judgement.refusal->message + " (" + send.purpose + " not sent)");
  }
  // A bodiless GET (a health probe) carries nothing of anyone's: no audit row.
  if (audit_ && !bytes.empty()) {
    const bool recorded = co_await record(bytes, send, judgement.has_findings);
    if (!recorded && audit_required_) {
      co_return refuse(send, "audit_unavailable",
                       "its audit row could not be stored, and operations.audit.required "
                       "refuses a send the audit would miss");
    }
  }
  sends_counter(send.purpose).add();
  co_return std::nullopt;
}

net::awaitable<bool> GatewayEgressGuard::record(const std::string& bytes, const EgressSend& send,
                                                bool has_findings) {
  store::AuditRecord row = audit_row(bytes, send, audit_content_, scanner_, has_findings);
  // Waiting for the commit is what makes a required row outlive a crash. An in-memory audit
  // dies with the process either way, so there a row the log accepts and the queue takes is
  // stored: the send skips the writer's round trip (about 50 us, docs/BENCHMARKS.md).
  if (!audit_required_ || !audit_->audit_persistent()) {
    const bool acceptable = !audit_required_ || store::AuditLog::check(row).ok();
    if (!acceptable || !audit_->submit_audit(std::move(row))) {
      log_event(LogLevel::kWarn, "audit", "dropped",
                {{"request_id", send.request_id}, {"upstream", send.upstream}});
      co_return false;
    }
    co_return true;
  }
  // The writer answers from its own thread; the answer comes back through this executor.
  auto executor = co_await net::asio::this_coro::executor;
  auto answer = std::make_shared<net::AsyncQueue<bool>>(executor);
  std::weak_ptr<net::AsyncQueue<bool>> waiting = answer;
  const bool queued = audit_->submit_audit(std::move(row), [waiting](bool stored) {
    if (auto queue = waiting.lock()) {
      queue->push(stored);
    }
  });
  if (!queued) {
    co_return false;
  }
  const std::optional<bool> stored = co_await answer->pop();
  co_return stored.value_or(false);
}

}  // namespace tandem::server
