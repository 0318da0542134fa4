// The audit of what left the device (store/audit_log.h): every body a cloud upstream receives
// is hashed and, per operations.audit.content, kept redacted or whole, then queued for the
// background writer. Runs on the request path only as far as hashing and redacting go.

#include <algorithm>

#include "common/log.h"
#include "server/gateway.h"
#include "server/gateway_util.h"

namespace tandem::server {
namespace {

using nlohmann::json;

// Masks every finding in every string of `value`: "[REDACTED:email]". Keys stay (they are the
// API's field names, not user data).
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

}  // namespace

std::function<void(const std::string&)> Gateway::audit_hook(const DecisionRecord& record,
                                                            const upstream::Upstream& u,
                                                            const std::string& model,
                                                            const char* purpose) const {
  if (!audit_log_ || !traces_) {
    return nullptr;
  }
  const std::string mode = config_.operations.audit.content;
  return [this, mode, request_id = record.request_id, client = record.client, upstream = u.name(),
          sent_model = u.config().models.at(model),
          why = std::string(purpose)](const std::string& body) {
    store::AuditRecord audit;
    audit.unix_ms = unix_ms();
    audit.request_id = request_id;
    audit.client = client;
    audit.upstream = upstream;
    audit.model = sent_model;
    audit.purpose = why;
    audit.bytes = static_cast<int64_t>(body.size());
    audit.sha256 = config::sha256_hex(body);
    audit.content_mode = mode;
    if (mode == "full") {
      audit.content = body.substr(0, store::kMaxAuditContentBytes);
    } else if (mode == "redacted") {
      json parsed = json::parse(body, nullptr, false);
      if (parsed.is_discarded()) {
        audit.content = "(the body is not JSON; not kept)";
      } else {
        redact(parsed, *audit_scanner_, audit);
        audit.content = parsed.dump().substr(0, store::kMaxAuditContentBytes);
      }
    }
    if (!traces_->submit_audit(std::move(audit))) {
      log_event(LogLevel::kWarn, "audit", "dropped",
                {{"request_id", request_id}, {"upstream", upstream}});
    }
  };
}

}  // namespace tandem::server
