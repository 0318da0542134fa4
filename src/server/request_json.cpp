#include "server/request_json.h"

#include <string>

#include "common/json_depth.h"
#include "common/json_document.h"

namespace tandem::server {

std::variant<nlohmann::json, ApiError> parse_request_object(std::string_view text,
                                                            ApiError not_an_object) {
  // Refused before anything copies or serialises the body recursively (json_depth.h).
  JsonDocumentError error;
  std::optional<nlohmann::json> document = parse_json_document(text, kMaxJsonDepth, error);
  if (error.too_deep) {
    return invalid_request("the request body nests arrays and objects deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  if (!document) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return invalid_request("the request body is empty: it must be a JSON object");
    }
    return invalid_request("the request body is not valid JSON: " +
                           describe_json_syntax_error(text, error.offset, error.syntax));
  }
  if (!document->is_object()) {
    return not_an_object;
  }
  return std::move(*document);
}

}  // namespace tandem::server
