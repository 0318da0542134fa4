#include "common/json_document.h"

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
  explicit DocumentBuilder(json& root) : root_(root) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(int64_t value) { return add(json(value)); }
  bool number_unsigned(uint64_t value) { return add(json(value)); }
  bool number_float(double value, const std::string& /*text*/) { return add(json(value)); }
  bool string(std::string& value) { return add(json(std::move(value))); }

  bool start_object(size_t /*size*/) {
    open_.push_back(add_container(json::value_t::object));
    return true;
  }
  bool start_array(size_t /*size*/) {
    open_.push_back(add_container(json::value_t::array));
    return true;
  }
  bool key(std::string& name) {
    member_ = &(*open_.back())[std::move(name)];
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

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

  bool close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  std::vector<json*> open_;  // the containers being filled, innermost last
  json* member_ = nullptr;   // the open object's member named by the last key
};

}  // namespace

std::optional<json> parse_json_document(std::string_view text) {
  json root;
  DocumentBuilder builder(root);
  if (!read_json_events(text, builder).ok) {
    return std::nullopt;
  }
  return root;
}

}  // namespace tandem
