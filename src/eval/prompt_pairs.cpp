#include "eval/prompt_pairs.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tandem::eval {
namespace {

Error pair_error(const std::string& file, size_t line, const std::string& what) {
  return make_error(ErrorCode::kInvalidArgument, file + ":" + std::to_string(line) + ": " + what);
}

Result<std::string> text_field(const nlohmann::json& row, const char* key, const std::string& file,
                               size_t line) {
  const auto it = row.find(key);
  if (it == row.end()) {
    return pair_error(file, line, std::string(key) + ": missing");
  }
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    return pair_error(file, line, std::string(key) + ": must be a non-empty string");
  }
  return it->get<std::string>();
}

constexpr std::array<std::string_view, 5> kRoles = {"system", "developer", "user", "assistant",
                                                    "tool"};

// One message of a side written as a conversation; `where` is "easy[2]".
Status check_message(const nlohmann::json& message, const std::string& where,
                     const std::string& file, size_t line) {
  if (!message.is_object()) {
    return pair_error(file, line, where + ": must be an object {role, content}");
  }
  const auto role = message.find("role");
  if (role == message.end() || !role->is_string() ||
      std::find(kRoles.begin(), kRoles.end(), role->get_ref<const std::string&>()) ==
          kRoles.end()) {
    return pair_error(file, line,
                      where + ".role: must be system, developer, user, assistant or tool");
  }
  const auto content = message.find("content");
  if (content == message.end() || !content->is_string()) {
    return pair_error(file, line, where + ".content: must be a string");
  }
  return {};
}

// A side: a prompt, or a conversation whose last message is the user's request.
Status read_side(const nlohmann::json& row, const char* key, const std::string& file, size_t line,
                 std::string& prompt, PairThread& thread) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_array()) {
    auto text = text_field(row, key, file, line);
    if (!text) {
      return it == row.end() ? text.error()
                             : pair_error(file, line,
                                          std::string(key) +
                                              ": must be a non-empty string or a "
                                              "list of messages");
    }
    prompt = std::move(text).value();
    return {};
  }
  const nlohmann::json& messages = *it;
  if (messages.empty() || !messages.back().is_object() ||
      messages.back().value("role", "") != "user") {
    return pair_error(file, line, std::string(key) + ": must end with a user message");
  }
  thread.turns = 0;
  std::string last;
  for (size_t k = 0; k < messages.size(); ++k) {
    const std::string where = std::string(key) + "[" + std::to_string(k) + "]";
    if (Status checked = check_message(messages[k], where, file, line); !checked) {
      return checked;
    }
    const auto& role = messages[k]["role"].get_ref<const std::string&>();
    const auto& content = messages[k]["content"].get_ref<const std::string&>();
    thread.total_chars += content.size();  // the messages' text, as the gateway counts it
    if (role == "system" || role == "developer") {
      if (!thread.system.empty()) {
        thread.system += '\n';  // joined as the gateway joins them
      }
      thread.system += content;
      continue;
    }
    ++thread.turns;
    if (role == "user") {
      if (k + 1 < messages.size()) {
        thread.earlier_user.push_back(content);
      } else {
        last = content;
      }
    }
  }
  if (last.empty()) {
    return pair_error(file, line, std::string(key) + ": the last user message is empty");
  }
  prompt = std::move(last);
  return {};
}

Result<PromptPair> parse_pair(const std::string& text, const std::string& file, size_t line) {
  nlohmann::json row;
  try {
    row = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return pair_error(file, line, std::string("not JSON: ") + e.what());
  }
  if (!row.is_object()) {
    return pair_error(file, line, "must be a JSON object");
  }
  PromptPair pair;
  pair.file = file;
  for (auto [key, field] : {std::pair{"id", &pair.id}, std::pair{"lang", &pair.lang}}) {
    auto value = text_field(row, key, file, line);
    if (!value) {
      return value.error();
    }
    *field = std::move(value).value();
  }
  if (Status read = read_side(row, "easy", file, line, pair.easy, pair.easy_thread); !read) {
    return read.error();
  }
  if (Status read = read_side(row, "hard", file, line, pair.hard, pair.hard_thread); !read) {
    return read.error();
  }
  if (row.contains("family")) {
    auto family = text_field(row, "family", file, line);
    if (!family) {
      return family.error();
    }
    pair.family = std::move(family).value();
  }
  return pair;
}

}  // namespace

Result<std::vector<PromptPair>> load_prompt_pairs(const std::vector<std::string>& files) {
  std::vector<PromptPair> pairs;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      return make_error(ErrorCode::kNotFound, file + ": cannot open: " + errno_message(errno));
    }
    std::string text;
    size_t line = 0;
    while (std::getline(in, text)) {
      ++line;
      if (text.find_first_not_of(" \t\r") == std::string::npos) {
        continue;
      }
      auto pair = parse_pair(text, file, line);
      if (!pair) {
        return pair.error();
      }
      pairs.push_back(std::move(pair).value());
    }
  }
  return pairs;
}

routing::PromptView pair_side_view(const std::string& prompt, const PairThread& thread,
                                   std::vector<std::string_view>& earlier) {
  earlier.assign(thread.earlier_user.begin(), thread.earlier_user.end());
  routing::PromptView view;
  view.system = thread.system;
  view.last_user = prompt;
  view.turns = thread.turns;
  view.total_chars = thread.total_chars == 0 ? prompt.size() : thread.total_chars;
  view.earlier_user = earlier;
  return view;
}

}  // namespace tandem::eval
