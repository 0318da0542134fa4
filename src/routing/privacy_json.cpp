#include "routing/privacy_json.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "common/json_events.h"

namespace tandem::routing {
namespace {

using nlohmann::json;

constexpr size_t kMaxKeyInPath = 64;

// Where a key is cut for the field path: at most kMaxKeyInPath bytes, backed off to the start of
// a UTF-8 sequence, so that a cut never splits a character (the path is serialised as JSON).
size_t key_cut(const std::string& key) {
  size_t cut = std::min(key.size(), kMaxKeyInPath);
  while (cut > 0 && cut < key.size() && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return cut;
}

// A path longer than this (deep nesting) keeps its head and tail around "...".
constexpr size_t kMaxPath = 256;
// A string this long made only of the base64 alphabet is a blob, not words: prose has spaces,
// and no identifier or URL a client sends is this long without a '.', ' ' or '%'.
constexpr size_t kMinBase64Blob = 256;

// Content-part types that carry what the detectors cannot read (OpenAI chat, Responses API).
constexpr std::array<std::string_view, 8> kOpaqueTypes = {
    "image_url", "input_image", "image", "input_audio", "audio", "file", "input_file", "video"};

// ASCII letters, digits, '_' and '-': a table, as std::isalnum is a call into the C locale per
// byte, and every key of every scanned body passes here.
constexpr std::array<bool, 256> kIdentifierByte = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
  }
  return table;
}();

bool identifier_like(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return kIdentifierByte[static_cast<unsigned char>(c)];
  });
}

bool base64_char(unsigned char c) {
  return kIdentifierByte[c] || c == '+' || c == '/' || c == '=';
}

bool is_base64_blob(std::string_view text) {
  if (text.size() < kMinBase64Blob) {
    return false;
  }
  if (text.rfind("data:", 0) == 0 && text.find(";base64,") != std::string_view::npos) {
    return true;
  }
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return base64_char(c); });
}

// One open array or object and what is being learned of it.
struct Frame {
  bool array = false;
  size_t index = 0;         // arrays: the next element's index
  std::string key;          // objects: the path segment of the current key
  bool key_hidden = false;  // the current key is being scanned: its segment shows as {key}
  bool key_is_text = false;
  bool key_is_type = false;
  // Arrays: the text parts of the element objects, joined, and where each part began.
  std::string joined;
  std::vector<size_t> starts;
};

// Reads a document as a stream of events: nlohmann's SAX interface, fed by read_json_events over
// bytes (the egress guard) or by walk() over a parsed document (the router), so both scan alike.
class Walker {
 public:
  // A chat body nests four or five deep: one allocation for the stack instead of one per level.
  explicit Walker(const PrivacyScanner& scanner) : scanner_(scanner) { stack_.reserve(8); }

  bool null() { return value_done(); }
  bool boolean(bool /*value*/) { return value_done(); }
  bool number_integer(json::number_integer_t value) { return number(std::to_string(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return number(std::to_string(value)); }
  bool number_float(json::number_float_t /*value*/, const std::string& text) {
    return number(text);
  }
  bool binary(json::binary_t& /*value*/) { return value_done(); }

  bool string(const std::string& value) {
    scan(value, stack_.size(), true);
    if (is_base64_blob(value)) {
      opaque(path(stack_.size(), true), "base64");
    }
    if (!stack_.empty() && !stack_.back().array) {
      Frame& object = stack_.back();
      if (object.key_is_type && in_content_array() &&
          std::find(kOpaqueTypes.begin(), kOpaqueTypes.end(), value) != kOpaqueTypes.end()) {
        opaque(path(stack_.size(), false), value);
      }
      if (object.key_is_text && stack_.size() >= 2 && stack_[stack_.size() - 2].array) {
        Frame& parts = stack_[stack_.size() - 2];
        parts.starts.push_back(parts.joined.size());
        parts.joined += value;
      }
    }
    return value_done();
  }

  bool start_object(std::size_t /*size*/) {
    stack_.emplace_back();
    return true;
  }

  bool key(const std::string& key) {
    Frame& object = stack_.back();
    // While the key itself is scanned its path shows {key}: a finding in it must not repeat it.
    object.key_hidden = true;
    const size_t before = result_.total_findings;
    scan(key, stack_.size(), true);
    object.key_hidden = false;
    if (result_.total_findings != before) {
      object.key = "{key}";
    } else {
      const std::string_view cut(key.data(), key_cut(key));
      if (identifier_like(cut)) {
        object.key.assign(cut);
      } else {
        object.key = json(std::string(cut)).dump(-1, ' ', false, json::error_handler_t::replace);
      }
    }
    object.key_is_text = key == "text";
    object.key_is_type = key == "type";
    return true;
  }

  bool end_object() { return end_container(); }

  bool start_array(std::size_t /*size*/) {
    stack_.emplace_back().array = true;
    return true;
  }

  bool end_array() {
    const Frame& parts = stack_.back();
    if (parts.starts.size() > 1) {
      scan_joined(parts);
    }
    return end_container();
  }

  JsonScan take() { return std::move(result_); }

 private:
  // The path of the container at stack_[depth - 1] (the document for depth 0); with `inner`,
  // of the value it is reading now (its current key or element).
  // A key that holds `hidden` (the finding's own text, which a key glued to other characters
  // can carry without the scan finding it there) shows as {key}: no path repeats a secret.
  std::string path(size_t depth, bool inner, std::string_view hidden = {}) const {
    std::string out;
    for (size_t i = 0; i < depth; ++i) {
      const bool last = i + 1 == depth;
      if (last && !inner) {
        break;
      }
      const Frame& frame = stack_[i];
      if (frame.array) {
        out += "[" + std::to_string(frame.index) + "]";
      } else {
        const bool hides =
            frame.key_hidden || (!hidden.empty() && frame.key.find(hidden) != std::string::npos);
        out += (out.empty() ? "" : ".") + (hides ? std::string("{key}") : frame.key);
      }
    }
    if (out.size() > kMaxPath) {
      out = out.substr(0, kMaxPath / 2) + "..." + out.substr(out.size() - kMaxPath / 2);
    }
    return out;
  }

  // The object on top is a content part: an element of an array held by a "content" or "input"
  // key (chat messages, the Responses API). A "type" elsewhere (a tool's JSON schema, metadata)
  // names something else.
  bool in_content_array() const {
    const size_t n = stack_.size();
    if (n < 3 || !stack_[n - 2].array || stack_[n - 3].array) {
      return false;
    }
    const std::string& key = stack_[n - 3].key;
    return key == "content" || key == "input";
  }

  bool number(const std::string& text) {
    scan(text, stack_.size(), true);
    return value_done();
  }

  bool value_done() {
    if (!stack_.empty() && stack_.back().array) {
      ++stack_.back().index;
    }
    return true;
  }

  bool end_container() {
    stack_.pop_back();
    return value_done();
  }

  // Scans `text`, the value (or key) at path(depth, inner); the path is built only for a
  // finding, so a deep document costs no more than its findings.
  void scan(std::string_view text, size_t depth, bool inner) {
    for (auto& finding : scanner_.scan(text)) {
      const std::string_view value = text.substr(finding.offset, finding.length);
      add(std::move(finding), value, depth, inner);
    }
  }

  // A finding of the joined text parts that no single part holds: it spans a part boundary.
  void scan_joined(const Frame& parts) {
    for (auto& finding : scanner_.scan(parts.joined)) {
      const size_t end = finding.offset + finding.length;
      const bool spans =
          std::any_of(parts.starts.begin() + 1, parts.starts.end(),
                      [&](size_t start) { return finding.offset < start && start < end; });
      if (spans) {
        const std::string_view value =
            std::string_view(parts.joined).substr(finding.offset, finding.length);
        add(std::move(finding), value, stack_.size(), false);
      }
    }
  }

  // `value` is the finding's text, kept out of its field path.
  void add(PrivacyFinding finding, std::string_view value, size_t depth, bool inner) {
    ++result_.total_findings;
    if (result_.findings.size() < kMaxJsonFindings) {
      finding.field = path(depth, inner, value);
      result_.findings.push_back(std::move(finding));
    }
  }

  void opaque(const std::string& field, std::string_view kind) {
    if (result_.opaque.size() < kMaxJsonFindings) {
      result_.opaque.push_back({field, std::string(kind)});
    }
  }

  const PrivacyScanner& scanner_;
  std::vector<Frame> stack_;
  JsonScan result_;
};

// Feeds a parsed document to `walker` as the parser would feed its bytes, without recursion.
// Numbers are read as the document serialises them: what an upstream receives.
void walk(const json& document, Walker& walker) {
  struct Cursor {
    const json* container;
    json::const_iterator next;
  };
  std::vector<Cursor> stack;
  stack.reserve(8);
  auto visit = [&](const json& value) {
    switch (value.type()) {
      case json::value_t::object:
        walker.start_object(value.size());
        stack.push_back({&value, value.cbegin()});
        break;
      case json::value_t::array:
        walker.start_array(value.size());
        stack.push_back({&value, value.cbegin()});
        break;
      case json::value_t::string:
        walker.string(value.get_ref<const std::string&>());
        break;
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
      case json::value_t::number_float:
        walker.number_float(0.0, value.dump());
        break;
      default:
        walker.null();
        break;
    }
  };
  visit(document);
  while (!stack.empty()) {
    Cursor& top = stack.back();
    if (top.next == top.container->cend()) {
      const bool object = top.container->is_object();
      stack.pop_back();
      if (object) {
        walker.end_object();
      } else {
        walker.end_array();
      }
      continue;
    }
    const auto at = top.next++;
    if (top.container->is_object()) {
      walker.key(at.key());
    }
    visit(*at);  // may push: `top` is not used after this
  }
}

}  // namespace

Result<JsonScan> scan_json_document(const PrivacyScanner& scanner, const nlohmann::json& document) {
  Walker walker(scanner);
  walk(document, walker);
  return walker.take();
}

Result<JsonScan> scan_json(const PrivacyScanner& scanner, std::string_view text) {
  Walker walker(scanner);
  // The same events as nlohmann's sax_parse, at a fraction of its cost (json_events.h).
  const JsonEventsResult read = read_json_events(text, walker);
  if (!read.ok) {
    return make_error(ErrorCode::kInvalidArgument,
                      "not valid JSON at byte " + std::to_string(read.offset));
  }
  return walker.take();
}

std::string describe_fields(const std::vector<PrivacyFinding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += (out.empty() ? "" : ", ") + f.detector + " (" + f.masked + ")";
    if (!f.field.empty()) {
      out += " in " + f.field;
    }
  }
  return out;
}

std::string describe_opaque(const std::vector<OpaqueContent>& opaque) {
  std::string out;
  for (const auto& o : opaque) {
    out += (out.empty() ? "" : ", ") + o.kind + " in " + o.field;
  }
  return out;
}

}  // namespace tandem::routing
