#include "server/responses.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include "common/json_writer.h"

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
          {"total_tokens", int64_t{usage.prompt_tokens} + usage.completion_tokens},
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

// A chunk's delta.tool_calls: what each delta has, as OpenAI streams a call (its id, type and
// name on its first delta, then pieces of its arguments).
json tool_calls_delta(const std::vector<ToolCallDelta>& deltas) {
  json out = json::array();
  for (const auto& delta : deltas) {
    json item = {{"index", delta.index}};
    json function = {{"arguments", delta.arguments}};
    if (!delta.id.empty()) {
      item["id"] = delta.id;
    }
    if (!delta.id.empty() || !delta.name.empty()) {
      item["type"] = "function";
    }
    if (!delta.name.empty()) {
      function["name"] = delta.name;
    }
    item["function"] = std::move(function);
    out.push_back(std::move(item));
  }
  return out;
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

std::string new_request_id(const std::string& prefix) {
  return prefix + random_suffix();
}

void WholeAnswer::add(ApiKind kind, const Piece& piece) {
  text += piece.text;
  append_logprobs(kind, logprobs, piece.logprobs);
  reasoning += piece.reasoning;
  append_tool_calls(tool_calls, piece.tool_calls);
}

json completion_response(ApiKind kind, const ResponseIds& ids, const std::string& text,
                         const json& logprobs, const Outcome& outcome,
                         const DecisionRecord& record) {
  WholeAnswer answer;
  answer.text = text;
  answer.logprobs = logprobs;
  return completion_response(kind, ids, answer, outcome, record);
}

json completion_response(ApiKind kind, const ResponseIds& ids, const WholeAnswer& answer,
                         const Outcome& outcome, const DecisionRecord& record) {
  return json::parse(completion_response_text(kind, ids, answer, outcome, record));
}

namespace {

void write_tool_calls(JsonWriter& out, const std::vector<ToolCallDelta>& calls) {
  out.begin_array();
  for (const auto& call : calls) {
    out.begin_object()
        .key("function")
        .begin_object()
        .member("arguments", call.arguments)
        .member("name", call.name)
        .end_object()
        .member("id", call.id)
        .member("type", "function")
        .end_object();
  }
  out.end_array();
}

void write_message(JsonWriter& out, const WholeAnswer& answer) {
  out.begin_object().key("content");
  if (answer.text.empty() && !answer.tool_calls.empty()) {
    out.null();
  } else {
    out.string(answer.text);
  }
  if (!answer.reasoning.empty()) {
    out.member("reasoning_content", answer.reasoning);
  }
  out.member("role", "assistant");
  if (!answer.tool_calls.empty()) {
    out.key("tool_calls");
    write_tool_calls(out, answer.tool_calls);
  }
  out.end_object();
}

void write_usage(JsonWriter& out, const TierUsage& usage) {
  out.begin_object()
      .member("completion_tokens", usage.completion_tokens)
      .member("prompt_tokens", usage.prompt_tokens)
      .key("prompt_tokens_details")
      .begin_object()
      .member("cached_tokens", usage.cached_prompt_tokens)
      .end_object()
      .member("total_tokens", int64_t{usage.prompt_tokens} + usage.completion_tokens)
      .end_object();
}

}  // namespace

// Members in name order, as nlohmann::json wrote this response before: the text is unchanged.
std::string completion_response_text(ApiKind kind, const ResponseIds& ids,
                                     const WholeAnswer& answer, const Outcome& outcome,
                                     const DecisionRecord& record) {
  std::string text;
  text.reserve(1024 + answer.text.size() + answer.reasoning.size());
  JsonWriter out(text);
  out.begin_object().key("choices").begin_array().begin_object();
  out.member("finish_reason", outcome.finish_reason).member("index", 0).key("logprobs");
  const json logprobs = logprobs_field(kind, answer.logprobs);
  if (logprobs.is_null()) {
    out.null();
  } else {
    out.raw(dump(logprobs));
  }
  if (kind == ApiKind::kChat) {
    out.key("message");
    write_message(out, answer);
  } else {
    out.member("text", answer.text);
  }
  out.end_object().end_array();
  out.member("created", ids.created)
      .member("id", ids.id)
      .member("model", ids.model)
      .member("object", kind == ApiKind::kChat ? "chat.completion" : "text_completion")
      .key("tandem");
  record.write_json(out);
  out.key("usage");
  write_usage(out, outcome.usage);
  out.end_object();
  return text;
}

json content_chunk(ApiKind kind, const ResponseIds& ids, const Piece& piece, bool first) {
  json chunk = chunk_base(kind, ids);
  json choice = {
      {"index", 0}, {"logprobs", logprobs_field(kind, piece.logprobs)}, {"finish_reason", nullptr}};
  if (kind == ApiKind::kChat) {
    json delta = json::object();
    if (!piece.text.empty() || (piece.reasoning.empty() && piece.tool_calls.empty())) {
      delta["content"] = piece.text;
    }
    if (!piece.reasoning.empty()) {
      delta["reasoning_content"] = piece.reasoning;
    }
    if (!piece.tool_calls.empty()) {
      delta["tool_calls"] = tool_calls_delta(piece.tool_calls);
    }
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

void append_tool_calls(std::vector<ToolCallDelta>& calls,
                       const std::vector<ToolCallDelta>& deltas) {
  for (const auto& delta : deltas) {
    const auto at = std::lower_bound(
        calls.begin(), calls.end(), delta.index,
        [](const ToolCallDelta& call, size_t index) { return call.index < index; });
    if (at == calls.end() || at->index != delta.index) {
      calls.insert(at, delta);
      continue;
    }
    if (at->id.empty()) {
      at->id = delta.id;
    }
    if (at->name.empty()) {
      at->name = delta.name;
    }
    at->arguments += delta.arguments;
  }
}

std::vector<ToolCallDelta> tool_call_deltas(
    const std::vector<upstream::CloudToolCallDelta>& deltas) {
  std::vector<ToolCallDelta> out;
  out.reserve(deltas.size());
  for (const auto& d : deltas) {
    out.push_back({d.index, d.id, d.name, d.arguments});
  }
  return out;
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tandem::server
