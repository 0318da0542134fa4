#pragma once
// An nlohmann::json document written through JsonWriter: the bytes nlohmann's
// `dump(-1, ' ', false, error_handler_t::replace)` writes for the same document (keys in its
// sorted order, integers as they are, floats in its own notation), without copying the
// document. The gateway writes every upstream request body this way: the client's body with
// the fields Tandem sets per upstream (model, stream) written over it, where it used to copy
// the body twice and set them in the copy (Upstream::post: 9.5k -> 4.5k instructions per
// request, docs/BENCHMARKS.md).
//
// Thread-safety: pure functions.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_writer.h"

namespace tandem {

void write_json(JsonWriter& out, const nlohmann::json& value);

// One top-level member written over a document's own, its value already JSON text.
struct JsonMember {
  std::string_view key;
  std::string_view json;
};

// `object` as nlohmann would dump it after `object[key] = value` for each of `members`: a
// member of the same key is replaced, a new one takes its place in the sorted key order. The
// members' keys are distinct. A null `object` is an empty one; any other value that is not an
// object throws nlohmann's type_error, as the assignment would.
std::string dump_object_with(const nlohmann::json& object, std::vector<JsonMember> members);

}  // namespace tandem
