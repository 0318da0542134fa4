#include "server/responses.h"

#include <atomic>
#include <chrono>
#include <random>

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;

namespace {

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out(24, 'x');
  for (auto& c : out) {
    c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  }
  return out;
}

json usage_json(const TierUsage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached_prompt_tokens}}}};
}

json chunk_base(ApiKind kind, const ResponseIds& ids) {
  return {{"id", ids.id},
          {"object", kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", ids.created},
          {"model", ids.model}};
}

json logprobs_field(ApiKind kind, const json& logprobs) {
  if (logprobs.is_null()) {
    return nullptr;
  }
  return kind == ApiKind::kChat ? json{{"content", logprobs}} : logprobs;
}

}  // namespace

ResponseIds new_response_ids(ApiKind kind, const std::string& model) {
  ResponseIds ids;
  ids.id = std::string(kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-") + random_suffix();
  ids.created = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  ids.model = model;
  return ids;
}

json completion_response(ApiKind kind, const ResponseIds& ids, const std::string& text,
                         const json& logprobs, const Outcome& outcome,
                         const DecisionRecord& record) {
  json choice = {{"index", 0},
                 {"logprobs", logprobs_field(kind, logprobs)},
                 {"finish_reason", outcome.finish_reason}};
  if (kind == ApiKind::kChat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    choice["text"] = text;
  }
  return {{"id", ids.id},
          {"object", kind == ApiKind::kChat ? "chat.completion" : "text_completion"},
          {"created", ids.created},
          {"model", ids.model},
          {"choices", json::array({std::move(choice)})},
          {"usage", usage_json(outcome.usage)},
          {"tandem", record.to_json()}};
}

json content_chunk(ApiKind kind, const ResponseIds& ids, const Piece& piece, bool first) {
  json chunk = chunk_base(kind, ids);
  json choice = {
      {"index", 0}, {"logprobs", logprobs_field(kind, piece.logprobs)}, {"finish_reason", nullptr}};
  if (kind == ApiKind::kChat) {
    json delta = {{"content", piece.text}};
    if (first) {
      delta["role"] = "assistant";
    }
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = piece.text;
  }
  chunk["choices"] = json::array({std::move(choice)});
  return chunk;
}

json finish_chunk(ApiKind kind, const ResponseIds& ids, const std::string& finish_reason) {
  json chunk = chunk_base(kind, ids);
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason}};
  if (kind == ApiKind::kChat) {
    choice["delta"] = json::object();
  } else {
    choice["text"] = "";
  }
  chunk["choices"] = json::array({std::move(choice)});
  return chunk;
}

json usage_chunk(ApiKind kind, const ResponseIds& ids, const TierUsage& usage) {
  json chunk = chunk_base(kind, ids);
  chunk["choices"] = json::array();
  chunk["usage"] = usage_json(usage);
  return chunk;
}

json models_response(const std::vector<ModelInfo>& models) {
  json data = json::array();
  for (const auto& m : models) {
    data.push_back({{"id", m.id}, {"object", "model"}, {"created", 0}, {"owned_by", m.owned_by}});
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

void append_logprobs(ApiKind kind, json& all, const json& piece) {
  if (piece.is_null()) {
    return;
  }
  if (kind == ApiKind::kChat) {
    if (all.is_null()) {
      all = json::array();
    }
    for (const auto& entry : piece) {
      all.push_back(entry);
    }
    return;
  }
  if (all.is_null()) {
    all = {{"tokens", json::array()},
           {"token_logprobs", json::array()},
           {"top_logprobs", json::array()},
           {"text_offset", json::array()}};
  }
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
    if (piece.contains(key) && piece[key].is_array()) {
      for (const auto& v : piece[key]) {
        all[key].push_back(v);
      }
    }
  }
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tandem::server
