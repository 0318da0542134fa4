// Redis replies: hiredis's reply converted into a RedisReply, error replies into Errors whose
// messages never quote a command's arguments.

#include "store/redis_reply.h"

#include <charconv>

#include <hiredis/hiredis.h>

#include "store/redis_client.h"

namespace tandem::store {
namespace {

constexpr size_t kMaxEchoBytes = 200;  // of a server's error text quoted in a message

// An error reply's text, made safe to show: Redis quotes the arguments of an unknown command
// ("…, with args beginning with: 'secret'"), so that part is cut, and so is anything long.
std::string safe_error_text(std::string_view text) {
  const size_t args = text.find(", with args beginning with");
  if (args != std::string_view::npos) {
    text = text.substr(0, args);
  }
  std::string out;
  for (char c : text.substr(0, std::min(text.size(), kMaxEchoBytes))) {
    out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  if (text.size() > kMaxEchoBytes) {
    out += "…";
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

ErrorCode error_reply_code(std::string_view text) {
  const std::string_view word = text.substr(0, text.find(' '));
  for (std::string_view busy : {"BUSY", "LOADING", "OOM", "READONLY", "TRYAGAIN", "MASTERDOWN",
                                "CLUSTERDOWN", "NOREPLICAS"}) {
    if (word == busy) {
      return ErrorCode::kBusy;
    }
  }
  for (std::string_view auth : {"NOAUTH", "WRONGPASS", "NOPERM"}) {
    if (word == auth) {
      return ErrorCode::kInvalidArgument;
    }
  }
  return ErrorCode::kInternal;
}

Error reply_error(std::string_view what, std::string_view text) {
  std::string message = "redis " + std::string(what) + " failed: " + safe_error_text(text);
  const ErrorCode code = error_reply_code(text);
  if (text.substr(0, 6) == "NOAUTH") {
    message += " (the server needs a password: set it in the URL or the password option)";
  }
  return make_error(code, std::move(message));
}

}  // namespace

std::string command_name(std::string_view name) {
  if (name.empty() || name.size() > 32) {
    return "command";
  }
  std::string out;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
    if (!word) {
      return "command";
    }
    out.push_back(c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
  }
  return out;
}

Result<RedisReply> convert(const redisReply* raw, std::string_view what) {
  RedisReply reply;
  switch (raw->type) {
    case REDIS_REPLY_NIL:
      return reply;
    case REDIS_REPLY_INTEGER:
      reply.type = RedisReply::Type::kInteger;
      reply.integer = static_cast<int64_t>(raw->integer);
      return reply;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      reply.type =
          raw->type == REDIS_REPLY_STRING ? RedisReply::Type::kString : RedisReply::Type::kStatus;
      reply.text.assign(raw->str, raw->len);
      return reply;
    case REDIS_REPLY_ARRAY:
      reply.type = RedisReply::Type::kArray;
      reply.elements.reserve(raw->elements);
      for (size_t i = 0; i < raw->elements; ++i) {
        auto element = convert(raw->element[i], what);
        if (!element) {
          return element.error();
        }
        reply.elements.push_back(std::move(element).value());
      }
      return reply;
    case REDIS_REPLY_ERROR:
      return reply_error(what, std::string_view(raw->str, raw->len));
    default:
      return make_error(ErrorCode::kInternal, "redis " + std::string(what) +
                                                  " returned a reply of unknown type " +
                                                  std::to_string(raw->type));
  }
}

bool is_error_reply(const redisReply* raw, std::string_view code) {
  return raw->type == REDIS_REPLY_ERROR &&
         std::string_view(raw->str, raw->len).substr(0, code.size()) == code;
}

void RedisReplyFree::operator()(redisReply* reply) const {
  freeReplyObject(reply);
}

std::optional<int64_t> RedisReply::as_int64() const {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (type != Type::kString || ec != std::errc() || ptr != end || text.empty()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace tandem::store
