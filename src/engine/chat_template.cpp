#include "engine/chat_template.h"

#include <array>

#include <llama.h>

namespace tandem::engine {
namespace {

constexpr std::array<const char*, 5> kRoles = {"system", "developer", "user", "assistant", "tool"};

bool known_role(const std::string& role) {
  for (const char* known : kRoles) {
    if (role == known) {
      return true;
    }
  }
  return false;
}

std::string normalized_role(const std::string& role) {
  return role == "developer" ? "system" : role;
}

std::string label(const std::string& role) {
  std::string text = normalized_role(role);
  text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

// llama_chat_apply_template with the buffer grown to whatever the template needs; a negative
// result means llama.cpp does not know this template.
std::optional<std::string> apply_model_template(const std::string& tmpl,
                                                const std::vector<ChatMessage>& messages) {
  std::vector<llama_chat_message> chat;
  chat.reserve(messages.size());
  std::vector<std::string> roles;
  roles.reserve(messages.size());
  size_t total = 0;
  for (const auto& message : messages) {
    roles.push_back(normalized_role(message.role));
    chat.push_back({roles.back().c_str(), message.content.c_str()});
    total += message.content.size();
  }
  std::string buffer(total * 2 + 256, '\0');
  int32_t n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, buffer.data(),
                                        static_cast<int32_t>(buffer.size()));
  if (n < 0) {
    return std::nullopt;
  }
  if (static_cast<size_t>(n) > buffer.size()) {
    buffer.resize(static_cast<size_t>(n));
    n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, buffer.data(),
                                  static_cast<int32_t>(buffer.size()));
  }
  buffer.resize(static_cast<size_t>(n));
  return buffer;
}

std::string render_plain(const std::vector<ChatMessage>& messages) {
  const bool single_turn = (messages.size() == 1 && messages[0].role == "user") ||
                           (messages.size() == 2 && normalized_role(messages[0].role) == "system" &&
                            messages[1].role == "user");
  if (single_turn) {
    return messages.size() == 1 ? messages[0].content
                                : messages[0].content + "\n\n" + messages[1].content;
  }
  std::string text;
  for (const auto& message : messages) {
    text += label(message.role) + ": " + message.content + "\n\n";
  }
  return text + "Assistant:";
}

}  // namespace

ChatTemplate ChatTemplate::from_model(const std::optional<std::string>& model_template) {
  ChatTemplate result;
  if (model_template && !model_template->empty() &&
      apply_model_template(*model_template, {{"user", "hello"}}).has_value()) {
    result.model_template_ = model_template;
    result.kind_ = "model";
  }
  return result;
}

Result<std::string> ChatTemplate::render(const std::vector<ChatMessage>& messages) const {
  if (messages.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "messages must not be empty");
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!known_role(messages[i].role)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "messages[" + std::to_string(i) + "].role '" + messages[i].role +
                            "' is not one of system, developer, user, assistant, tool");
    }
  }
  if (model_template_) {
    if (auto text = apply_model_template(*model_template_, messages)) {
      return *text;
    }
    return make_error(ErrorCode::kInternal, "the model's chat template failed to render");
  }
  return render_plain(messages);
}

}  // namespace tandem::engine
