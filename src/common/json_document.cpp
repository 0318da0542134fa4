#include "common/json_document.h"

#include <limits>
#include <string>
#include <vector>

#include "common/json_events.h"

namespace tandem {
namespace {

using nlohmann::json;

// Builds the document from the reader's events, as nlohmann's own DOM parser does: a value
// goes into the open array, or into the open object under the last key.
class DocumentBuilder {
 public:
  // A chat body nests four or five deep: one allocation for the stack, not one per level.
  DocumentBuilder(json& root, size_t max_depth) : root_(root), max_depth_(max_depth) {
    open_.reserve(8);
  }

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(int64_t value) { return add(json(value)); }
  bool number_unsigned(uint64_t value) { return add(json(value)); }
  bool number_float(double value, const std::string& /*text*/) { return add(json(value)); }
  bool string(std::string& value) { return add(json(std::move(value))); }

  bool start_object(size_t /*size*/) { return open(json::value_t::object); }
  bool start_array(size_t /*size*/) { return open(json::value_t::array); }
  bool key(std::string& name) {
    member_ = &(*open_.back())[std::move(name)];
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool too_deep() const { return too_deep_; }

 private:
  // Where the next value goes: the root, the end of the open array, or the member just keyed.
  json* slot() {
    if (open_.empty()) {
      return &root_;
    }
    json& container = *open_.back();
    if (container.is_array()) {
      container.emplace_back();
      return &container.back();
    }
    return member_;
  }

  bool add(json&& value) {
    *slot() = std::move(value);
    return true;
  }

  json* add_container(json::value_t type) {
    json* at = slot();
    *at = json(type);
    return at;
  }

  bool open(json::value_t type) {
    if (open_.size() == max_depth_) {
      too_deep_ = true;
      return false;  // ends the read
    }
    open_.push_back(add_container(type));
    return true;
  }

  bool close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  const size_t max_depth_;
  bool too_deep_ = false;
  std::vector<json*> open_;  // the containers being filled, innermost last
  json* member_ = nullptr;   // the open object's member named by the last key
};

}  // namespace

std::optional<json> parse_json_document(std::string_view text) {
  JsonDocumentError error;
  return parse_json_document(text, std::numeric_limits<size_t>::max(), error);
}

std::optional<json> parse_json_document(std::string_view text, size_t max_depth,
                                        JsonDocumentError& error) {
  json root;
  DocumentBuilder builder(root, max_depth);
  const JsonEventsResult read = read_json_events(text, builder);
  error = {builder.too_deep(), read.offset, read.error};
  if (!read.ok) {
    return std::nullopt;
  }
  return root;
}

}  // namespace tandem
