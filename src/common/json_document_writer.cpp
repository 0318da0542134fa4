#include "common/json_document_writer.h"

#include <algorithm>
#include <charconv>

namespace tandem {

using nlohmann::json;

namespace {

void write_unsigned(JsonWriter& out, uint64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out.raw(std::string_view(digits, static_cast<size_t>(end - digits)));
}

void write_object(JsonWriter& out, const json::object_t& object) {
  out.begin_object();
  for (const auto& [key, value] : object) {
    out.key(key);
    write_json(out, value);
  }
  out.end_object();
}

}  // namespace

void write_json(JsonWriter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      write_object(out, value.get_ref<const json::object_t&>());
      return;
    case json::value_t::array:
      out.begin_array();
      for (const auto& item : value.get_ref<const json::array_t&>()) {
        write_json(out, item);
      }
      out.end_array();
      return;
    case json::value_t::string:
      out.string(value.get_ref<const std::string&>());
      return;
    case json::value_t::number_integer:
      out.number(value.get<int64_t>());
      return;
    case json::value_t::number_unsigned:
      write_unsigned(out, value.get<uint64_t>());
      return;
    case json::value_t::boolean:
      out.boolean(value.get<bool>());
      return;
    case json::value_t::null:
      out.null();
      return;
    default:
      // Floats in nlohmann's own notation (it and std::to_chars choose between fixed and
      // exponent differently); binary values, which no parsed document holds.
      out.raw(value.dump(-1, ' ', false, json::error_handler_t::replace));
      return;
  }
}

std::string dump_object_with(const json& object, std::vector<JsonMember> members) {
  // nlohmann's object is a std::map of std::string: its order is the byte order, the same
  // as std::string_view's.
  std::sort(members.begin(), members.end(),
            [](const JsonMember& a, const JsonMember& b) { return a.key < b.key; });
  std::string text;
  text.reserve(256);
  JsonWriter out(text);
  out.begin_object();
  auto next = members.begin();
  const auto write_member = [&] {
    out.key(next->key).raw(next->json);
    ++next;
  };
  // A null document is an empty object, as `object[key] = value` makes it; any other value
  // that is not an object throws nlohmann's type_error, as that assignment did.
  static const json::object_t kEmpty;
  const json::object_t& own = object.is_null() ? kEmpty : object.get_ref<const json::object_t&>();
  for (const auto& [key, value] : own) {
    while (next != members.end() && next->key < key) {
      write_member();
    }
    if (next != members.end() && next->key == key) {
      write_member();  // in the object's place, over its value
      continue;
    }
    out.key(key);
    write_json(out, value);
  }
  while (next != members.end()) {
    write_member();
  }
  out.end_object();
  return text;
}

}  // namespace tandem
