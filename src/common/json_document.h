#pragma once
// A JSON text parsed into nlohmann::json through json_events.h: the same document
// nlohmann::json::parse builds (the same values, number types, key order and duplicate-key
// rule, the last one kept), without nlohmann's lexer. The gateway parses every request body
// this way. A test compares the two on generated and mutated texts.
//
// Thread-safety: a pure function.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/json_syntax.h"

namespace tandem {

// The document, or nullopt when `text` is not exactly one JSON value (json_events.h, which
// also refuses a NUL byte that nlohmann would take as the end of the text).
std::optional<nlohmann::json> parse_json_document(std::string_view text);

// Why parse_json_document refused a text.
struct JsonDocumentError {
  bool too_deep = false;  // it nests deeper than the limit
  size_t offset = 0;      // otherwise, where it stopped being JSON, and why
  JsonSyntaxError syntax = JsonSyntaxError::kNone;
};

// The same, refusing a document that nests arrays and objects deeper than `max_depth`
// (`error.too_deep` says so): the depth is checked as the document is built, with no pass of its
// own, and a refused text is read no further than the level that broke the limit.
std::optional<nlohmann::json> parse_json_document(std::string_view text, size_t max_depth,
                                                  JsonDocumentError& error);

}  // namespace tandem
