#pragma once
// The privacy scanner over a whole JSON document: every string value, every object key and every
// number, whatever field it sits in, nested arrays included, each finding with the path of its
// field ("messages[1].tool_calls[0].function.arguments", "metadata.customer"). The router scans
// the client's body with it and the egress guard scans the exact bytes about to leave, so the
// two always see the same content.
//
// Besides the strings one by one, the text parts of a content array are read joined, as a model
// reads them, so a card number split across two parts is still one card number. Content the
// detectors cannot read is reported as opaque: parts whose type is not text (images, audio,
// files) and base64 blobs (data: URLs, long runs of the base64 alphabet).
//
// A path never holds a value: a key in which a detector finds something appears as "{key}", and
// keys are cut to 64 bytes.
//
// Thread-safety: a pure function; any number may run at once.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "routing/privacy_scanner.h"

namespace tandem::routing {

// Something in the document the privacy detectors cannot read.
struct OpaqueContent {
  std::string field;  // "messages[0].content[1]"
  std::string kind;   // the part's type ("image_url", "input_audio", "file"...) or "base64"

  friend bool operator==(const OpaqueContent&, const OpaqueContent&) = default;
};

struct JsonScan {
  // Every finding in document order, PrivacyFinding::field set; offset and length are within
  // that field's text (the key's for "{key}" fields, the joined text for a content array).
  // At most kMaxJsonFindings are kept; `total_findings` counts them all.
  std::vector<PrivacyFinding> findings;
  size_t total_findings = 0;
  std::vector<OpaqueContent> opaque;  // at most kMaxJsonFindings
};

inline constexpr size_t kMaxJsonFindings = 64;

// Fails (kInvalidArgument) when `text` is not exactly one JSON value.
Result<JsonScan> scan_json(const PrivacyScanner& scanner, std::string_view text);
// The same over a parsed document, without serialising it: the same findings, fields and
// opaque parts as over document.dump() (numbers are read as dump() writes them).
Result<JsonScan> scan_json_document(const PrivacyScanner& scanner, const nlohmann::json& document);

// "payment_card (****1111) in messages[1].tool_calls[0].function.arguments, email (***@***.com)
// in metadata.customer": what a log, an error or a decision record may say of the findings.
std::string describe_fields(const std::vector<PrivacyFinding>& findings);
std::string describe_opaque(const std::vector<OpaqueContent>& opaque);

}  // namespace tandem::routing
