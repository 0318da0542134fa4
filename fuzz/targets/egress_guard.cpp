// The egress guard's verdict (routing/egress_rules.h, what server/egress_guard.h calls) over
// random JSON bodies with a secret planted somewhere: in a string value (inside other text), as
// an object key, as a new member or array element, or as a bare number. Whatever the body, a
// body with a planted secret never passes, the verdict names the field and never the value,
// and a body that is not JSON is refused rather than let through unscanned.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "routing/egress_rules.h"

namespace tandem::fuzz {
namespace {

using nlohmann::json;

// Secrets that stay one finding whatever text surrounds them (a space on each side).
constexpr std::string_view kSecrets[] = {
    "jane.doe@example.org",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "card 4111-1111-1111-1111 end",
    "IBAN DE89 3704 0044 0532 0130 00 end",
};
constexpr uint64_t kCardNumber = 4111111111111111;

// Every value of the document, in document order (containers before their members).
void collect(json& value, std::vector<json*>& out) {
  out.push_back(&value);
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) {
      collect(item, out);
    }
  }
}

// Plants a secret in `doc` at a place chosen by `choice`; returns it (empty for the number).
std::string plant(json& doc, uint64_t choice) {
  std::vector<json*> values;
  collect(doc, values);
  json& at = *values[choice % values.size()];
  const std::string secret(kSecrets[(choice / 7) % std::size(kSecrets)]);
  switch ((choice / 31) % 4) {
    case 0:
      if (at.is_string()) {
        std::string text = at.get<std::string>();
        const size_t cut = text.empty() ? 0 : (choice / 131) % (text.size() + 1);
        at = text.substr(0, cut) + " " + secret + " " + text.substr(cut);
        return secret;
      }
      break;
    case 1:
      if (at.is_object()) {
        at[secret] = 1;  // a key
        return secret;
      }
      break;
    case 2:
      if (at.is_array()) {
        at.push_back(kCardNumber);  // a bare number
        return "";
      }
      break;
    default:
      break;
  }
  if (at.is_object()) {
    at["planted"] = secret;
  } else if (at.is_array()) {
    at.push_back(secret);
  } else {
    at = json::array({at, secret});
  }
  return secret;
}

uint64_t choice_of(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: any stable spread will do
  for (const char c : text) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return h;
}

}  // namespace

void fuzz_egress_guard(const uint8_t* data, size_t size) {
  static const routing::PrivacyScanner scanner;
  const std::string_view text = as_text(data, size);
  const routing::EgressRules rules;

  // The raw bytes as a body: JSON or refused, never passed unread.
  const json raw = json::parse(text, nullptr, false);
  const auto raw_verdict = routing::judge_egress(scanner, rules, text, true);
  if (raw.is_discarded() && !text.empty()) {
    FUZZ_CHECK_MSG(raw_verdict && raw_verdict->code == "unreadable_body",
                   raw_verdict ? raw_verdict->code : std::string("passed"));
  }
  FUZZ_CHECK(routing::judge_egress(scanner, rules, text, false)->code == "local_only");

  json doc = raw.is_discarded() ? json(std::string(text)) : raw;
  const std::string secret = plant(doc, choice_of(text));
  const std::string body = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  const auto verdict = routing::judge_egress(scanner, rules, body, true);
  FUZZ_CHECK_MSG(verdict.has_value(), "a planted secret passed: " + body.substr(0, 400));
  FUZZ_CHECK_MSG(verdict->code == "private_data" || verdict->code == "unreadable_body",
                 verdict->code);
  if (!secret.empty()) {
    FUZZ_CHECK_MSG(verdict->message.find(secret) == std::string::npos, verdict->message);
  }
}

}  // namespace tandem::fuzz
