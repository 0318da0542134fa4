#include "config/config_editor.h"

#include <algorithm>
#include <cstddef>

#include <yaml-cpp/yaml.h>

namespace tandem::config {
namespace {

Error edit_error(const std::string& source, int line, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument,
                    source + (line >= 0 ? ":" + std::to_string(line + 1) : "") + ": " + message);
}

std::string dotted(const std::vector<std::string>& path, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < path.size(); ++i) {
    out += (i ? "." : "") + path[i];
  }
  return out;
}

// Offsets of the start of each line.
std::vector<size_t> line_starts(const std::string& text) {
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      starts.push_back(i + 1);
    }
  }
  return starts;
}

std::string_view line_at(const std::string& text, const std::vector<size_t>& starts, size_t line) {
  const size_t begin = starts[line];
  const size_t end = line + 1 < starts.size() ? starts[line + 1] - 1 : text.size();
  return std::string_view(text).substr(begin, end - begin);
}

// Indentation of a line with content; npos for blank and comment-only lines.
size_t content_indent(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos || line[first] == '#') {
    return std::string_view::npos;
  }
  return first;
}

// Where the first YAML document's text ends: at its end marker ("...") or the next document's
// "---", once the document has content; the end of the text without either. Keys added at the
// top level go there: after the marker they would belong to a document nobody reads.
size_t document_end(const std::string& text) {
  const auto starts = line_starts(text);
  bool content = false;
  for (size_t l = 0; l < starts.size(); ++l) {
    const std::string_view line = line_at(text, starts, l);
    const bool end_marker = line.rfind("...", 0) == 0;
    const bool marker = (end_marker || line.rfind("---", 0) == 0) &&
                        (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    if (marker && (content || end_marker)) {
      return starts[l];
    }
    // A directive (%YAML) and a leading "---" are not content.
    content = content || (!marker && line.rfind('%', 0) != 0 &&
                          content_indent(line) != std::string_view::npos);
  }
  return text.size();
}

// Where the value of the key starting at `key_pos` begins on its line: after the colon and
// any spaces. npos when the line has no colon (cannot happen for a block mapping key).
size_t value_start(const std::string& text, size_t key_pos) {
  size_t colon = key_pos;
  const char quote = text[key_pos];
  if (quote == '"' || quote == '\'') {
    colon = text.find(quote, key_pos + 1);
  }
  colon = text.find(':', colon == std::string::npos ? key_pos : colon);
  if (colon == std::string::npos) {
    return std::string::npos;
  }
  size_t v = colon + 1;
  while (v < text.size() && (text[v] == ' ' || text[v] == '\t')) {
    ++v;
  }
  return v;
}

// The end of the scalar starting at `pos` on its line (a quoted string, or a plain scalar up
// to a comment or the end of the line).
size_t scalar_end(const std::string& text, size_t pos) {
  if (pos < text.size() && (text[pos] == '"' || text[pos] == '\'')) {
    const size_t close = text.find(text[pos], pos + 1);
    return close == std::string::npos ? text.size() : close + 1;
  }
  size_t end = pos;
  while (end < text.size() && text[end] != '\n' &&
         !(text[end] == '#' && end > pos && (text[end - 1] == ' ' || text[end - 1] == '\t'))) {
    ++end;
  }
  while (end > pos && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) {
    --end;
  }
  return end;
}

// Where the key holding the node being walked was written; line -1: the node is the document.
struct KeyPlace {
  int line = -1;
  size_t column = 0;
  size_t pos = 0;
};

// The document's root: a mapping, or nothing yet.
Result<YAML::Node> load_root(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return edit_error(source, e.mark.line, "not valid YAML: " + e.msg);
  }
  if (root && !root.IsNull() && !root.IsMap()) {
    return edit_error(source, root.Mark().line, "the top level must be a mapping");
  }
  return root;
}

// `edit.path[depth]` under `node`. (A default YAML::Node is a defined null, so `found` says
// whether there was one.)
struct FoundKey {
  bool found = false;
  YAML::Node key;
  YAML::Node value;
};

Result<FoundKey> find_key(const YAML::Node& node, const ConfigEdit& edit, size_t depth,
                          const std::string& source) {
  FoundKey out;
  if (node && node.IsMap()) {
    if (node.Style() == YAML::EmitterStyle::Flow) {
      return edit_error(source, node.Mark().line,
                        dotted(edit.path, depth) +
                            ": a flow-style mapping cannot be edited; write it in block style");
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it->first.Scalar() == edit.path[depth]) {
        out.found = true;
        out.key = it->first;
        out.value = it->second;
        break;
      }
    }
  } else if (node && !node.IsNull()) {
    return edit_error(source, node.Mark().line,
                      dotted(edit.path, depth) + ": holds a value, not a mapping");
  }
  return out;
}

// The last key on the path exists at `key`: its scalar value becomes `edit.value`.
Result<std::string> replace_value(std::string text, const ConfigEdit& edit, const KeyPlace& key,
                                  const YAML::Node& value, const std::string& source) {
  if (value.IsMap() || value.IsSequence()) {
    return edit_error(source, key.line,
                      dotted(edit.path, edit.path.size()) + ": holds a " +
                          (value.IsMap() ? "mapping" : "list") + ", not a value");
  }
  const size_t v = value_start(text, key.pos);
  if (v == std::string::npos) {
    return edit_error(source, key.line,
                      dotted(edit.path, edit.path.size()) + ": no colon after key");
  }
  const size_t end = scalar_end(text, v);
  const bool empty_value = v >= text.size() || text[v] == '\n' || text[v] == '#';
  text.replace(v, empty_value ? 0 : end - v, empty_value ? edit.value + " " : edit.value);
  return text;
}

// Where keys missing under a mapping go, and how deep they are indented.
struct InsertPoint {
  size_t at = 0;
  size_t indent = 0;
};

// Under the document: at the end of its first document, as deep as its first key.
InsertPoint top_level_insert_point(const std::string& text, const YAML::Node& root) {
  InsertPoint point;
  if (root && root.IsMap() && root.size() > 0) {
    point.indent = static_cast<size_t>(root.begin()->first.Mark().column);
  }
  point.at = document_end(text);
  return point;
}

// Under the key at `key` holding `node`: after the last line of its block, as deep as its
// other keys (two deeper than it when it has none). A null written as its value (`cascade: ~`)
// is removed from `text` first: the mapping replaces it.
InsertPoint nested_insert_point(std::string& text, const YAML::Node& node, const KeyPlace& key) {
  const size_t v = value_start(text, key.pos);
  if (node.IsNull() && v != std::string::npos && v < text.size() && text[v] != '\n' &&
      text[v] != '#') {
    size_t from = v;
    while (from > 0 && (text[from - 1] == ' ' || text[from - 1] == '\t')) {
      --from;
    }
    text.erase(from, scalar_end(text, v) - from);
  }
  InsertPoint point;
  point.indent = node.IsMap() && node.size() > 0
                     ? static_cast<size_t>(node.begin()->first.Mark().column)
                     : key.column + 2;
  // The block ends before the next content line indented no deeper than its key.
  size_t last_content = static_cast<size_t>(key.line);
  const auto lines = line_starts(text);
  for (size_t l = static_cast<size_t>(key.line) + 1; l < lines.size(); ++l) {
    const size_t i = content_indent(line_at(text, lines, l));
    if (i == std::string_view::npos) {
      continue;
    }
    if (i <= key.column) {
      break;
    }
    last_content = l;
  }
  point.at = last_content + 1 < lines.size() ? lines[last_content + 1] : text.size();
  return point;
}

// `edit.path[depth]` is missing under `node` (held by the key at `key`): adds it and whatever
// lies below it, the last with the edit's value.
std::string add_missing_keys(std::string text, const ConfigEdit& edit, size_t depth,
                             const YAML::Node& node, const KeyPlace& key) {
  const InsertPoint point =
      key.line < 0 ? top_level_insert_point(text, node) : nested_insert_point(text, node, key);
  std::string block;
  for (size_t d = depth; d < edit.path.size(); ++d) {
    block += std::string(point.indent + 2 * (d - depth), ' ') + edit.path[d] + ":";
    block += d + 1 == edit.path.size() ? " " + edit.value + "\n" : "\n";
  }
  size_t insert_at = point.at;
  if (insert_at == text.size() && !text.empty() && text.back() != '\n') {
    text += '\n';
    insert_at = text.size();
  }
  text.insert(insert_at, block);
  return text;
}

// Walks the edit's path down the mappings: the value of the last key is replaced, or the first
// missing key is added with the rest of the path below it.
Result<std::string> apply_one(std::string text, const ConfigEdit& edit, const std::string& source) {
  auto root = load_root(text, source);
  if (!root) {
    return root.error();
  }
  YAML::Node node = root.value();
  KeyPlace key;
  for (size_t depth = 0; depth < edit.path.size(); ++depth) {
    auto found = find_key(node, edit, depth, source);
    if (!found) {
      return found.error();
    }
    if (!found->found) {
      return add_missing_keys(std::move(text), edit, depth, node, key);
    }
    const YAML::Mark mark = found->key.Mark();
    key = KeyPlace{mark.line, static_cast<size_t>(mark.column), static_cast<size_t>(mark.pos)};
    if (depth + 1 == edit.path.size()) {
      return replace_value(std::move(text), edit, key, found->value, source);
    }
    node = found->value;
  }
  return edit_error(source, -1, "an edit needs a key path");
}

// Whether YAML reads `edit` back from `text`: the edit is text surgery on lines, and what yaml-cpp
// tolerates around them (an unterminated quote swallows what follows it, a leading ',' ends the
// document) can leave it unread. Then the file must be edited by hand, not reported as edited.
bool reads_back(const std::string& text, const ConfigEdit& edit) {
  try {
    YAML::Node node = YAML::Load(text);
    for (const auto& key : edit.path) {
      if (!node.IsMap() || !node[key]) {
        return false;
      }
      node.reset(node[key]);
    }
    return node.IsScalar() && node.Scalar() == YAML::Load(edit.value).Scalar();
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace

Result<std::string> apply_edits(std::string text, const std::vector<ConfigEdit>& edits,
                                const std::string& source) {
  // yaml-cpp reads text with NUL bytes as UTF-16 or UTF-32; edits written as UTF-8 into it would
  // not be read back, or would break the file.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    const auto line =
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    return edit_error(source, static_cast<int>(line),
                      "holds a NUL byte: only UTF-8 text can be edited (is the file UTF-16?)");
  }
  for (const auto& edit : edits) {
    if (edit.path.empty()) {
      return edit_error(source, -1, "an edit needs a key path");
    }
    auto edited = apply_one(std::move(text), edit, source);
    if (!edited) {
      return edited.error();
    }
    if (!reads_back(edited.value(), edit)) {
      return edit_error(source, -1,
                        dotted(edit.path, edit.path.size()) +
                            ": the edited file does not read back with the new value; edit it "
                            "by hand");
    }
    text = std::move(edited).value();
  }
  return text;
}

}  // namespace tandem::config
