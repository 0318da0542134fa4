#include "server/responses.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>

#include "common/json_writer.h"
#include "server/decision_parts_json.h"

namespace tandem::server {

using nlohmann::json;
using upstream::ApiKind;

namespace {

std::string random_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  constexpr uint64_t kBase = sizeof(kAlphabet) - 1;
  // Nine base-62 digits from each 64-bit draw (62^9 is below 2^60): three draws for an id,
  // where a draw per character took 24. The ninth digit comes from the draw's top 17 bits, so
  // some of its values are 1 in 1,400 likelier than others: ids need to be unique, not secret.
  constexpr size_t kDigitsPerDraw = 9;
  std::string out(24, 'x');
  uint64_t draw = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % kDigitsPerDraw == 0) {
      draw = rng();
    }
    out[i] = kAlphabet[draw % kBase];
    draw /= kBase;
  }
  return out;
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
        .key("function"_key)
        .begin_object()
        .member("arguments"_key, call.arguments)
        .member("name"_key, call.name)
        .end_object()
        .member("id"_key, call.id)
        .member("type"_key, "function")
        .end_object();
  }
  out.end_array();
}

void write_message(JsonWriter& out, const WholeAnswer& answer) {
  out.begin_object().key("content"_key);
  if (answer.text.empty() && !answer.tool_calls.empty()) {
    out.null();
  } else {
    out.string(answer.text);
  }
  if (!answer.reasoning.empty()) {
    out.member("reasoning_content"_key, answer.reasoning);
  }
  out.member("role"_key, "assistant");
  if (!answer.tool_calls.empty()) {
    out.key("tool_calls"_key);
    write_tool_calls(out, answer.tool_calls);
  }
  out.end_object();
}

void write_usage(JsonWriter& out, const TierUsage& usage) {
  out.begin_object()
      .member("completion_tokens"_key, usage.completion_tokens)
      .member("prompt_tokens"_key, usage.prompt_tokens)
      .key("prompt_tokens_details"_key)
      .begin_object()
      .member("cached_tokens"_key, usage.cached_prompt_tokens)
      .end_object()
      .member("total_tokens"_key, int64_t{usage.prompt_tokens} + usage.completion_tokens)
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
  out.begin_object().key("choices"_key).begin_array().begin_object();
  out.member("finish_reason"_key, outcome.finish_reason).member("index"_key, 0).key("logprobs"_key);
  const json logprobs = logprobs_field(kind, answer.logprobs);
  if (logprobs.is_null()) {
    out.null();
  } else {
    out.raw(dump(logprobs));
  }
  if (kind == ApiKind::kChat) {
    out.key("message"_key);
    write_message(out, answer);
  } else {
    out.member("text"_key, answer.text);
  }
  out.end_object().end_array();
  out.member("created"_key, ids.created)
      .member("id"_key, ids.id)
      .member("model"_key, ids.model)
      .member("object"_key, kind == ApiKind::kChat ? "chat.completion" : "text_completion")
      .key("tandem"_key);
  record.write_json(out);
  out.key("usage"_key);
  write_usage(out, outcome.usage);
  out.end_object();
  return text;
}

namespace {

// The members every chunk starts with after `choices`, in name order.
void write_chunk_ids(JsonWriter& out, ApiKind kind, const ResponseIds& ids) {
  out.member("created"_key, ids.created)
      .member("id"_key, ids.id)
      .member("model"_key, ids.model)
      .member("object"_key, kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion");
}

void write_logprobs(JsonWriter& out, ApiKind kind, const json& logprobs) {
  const json field = logprobs_field(kind, logprobs);
  if (field.is_null()) {
    out.null();
  } else {
    out.raw(dump(field));
  }
}

// A chunk's delta.tool_calls: what each delta has, as OpenAI streams a call (its id, type and
// name on its first delta, then pieces of its arguments).
void write_tool_call_deltas(JsonWriter& out, const std::vector<ToolCallDelta>& deltas) {
  out.begin_array();
  for (const auto& delta : deltas) {
    out.begin_object().key("function"_key).begin_object().member("arguments"_key, delta.arguments);
    if (!delta.name.empty()) {
      out.member("name"_key, delta.name);
    }
    out.end_object();
    if (!delta.id.empty()) {
      out.member("id"_key, delta.id);
    }
    out.member("index"_key, static_cast<int64_t>(delta.index));
    if (!delta.id.empty() || !delta.name.empty()) {
      out.member("type"_key, "function");
    }
    out.end_object();
  }
  out.end_array();
}

void write_delta(JsonWriter& out, const Piece& piece, bool first) {
  out.begin_object();
  if (!piece.text.empty() || (piece.reasoning.empty() && piece.tool_calls.empty())) {
    out.member("content"_key, piece.text);
  }
  if (!piece.reasoning.empty()) {
    out.member("reasoning_content"_key, piece.reasoning);
  }
  if (first) {
    out.member("role"_key, "assistant");
  }
  if (!piece.tool_calls.empty()) {
    out.key("tool_calls"_key);
    write_tool_call_deltas(out, piece.tool_calls);
  }
  out.end_object();
}

void write_record(JsonWriter& out, const DecisionRecord* record) {
  if (record != nullptr) {
    out.key("tandem"_key);
    record->write_json(out);
  }
}

}  // namespace

// Members in name order at every level, as nlohmann::json wrote these chunks: the same bytes.
std::string content_chunk_text(ApiKind kind, const ResponseIds& ids, const Piece& piece,
                               bool first) {
  std::string text;
  text.reserve(256 + piece.text.size() + piece.reasoning.size());
  JsonWriter out(text);
  out.begin_object().key("choices"_key).begin_array().begin_object();
  if (kind == ApiKind::kChat) {
    out.key("delta"_key);
    write_delta(out, piece, first);
  }
  out.key("finish_reason"_key).null().member("index"_key, 0).key("logprobs"_key);
  write_logprobs(out, kind, piece.logprobs);
  if (kind != ApiKind::kChat) {
    out.member("text"_key, piece.text);
  }
  out.end_object().end_array();
  write_chunk_ids(out, kind, ids);
  out.end_object();
  return text;
}

std::string finish_chunk_text(ApiKind kind, const ResponseIds& ids,
                              const std::string& finish_reason, const DecisionRecord* record) {
  std::string text;
  JsonWriter out(text);
  out.begin_object().key("choices"_key).begin_array().begin_object();
  if (kind == ApiKind::kChat) {
    out.key("delta"_key).begin_object().end_object();
  }
  out.member("finish_reason"_key, finish_reason).member("index"_key, 0).key("logprobs"_key).null();
  if (kind != ApiKind::kChat) {
    out.member("text"_key, "");
  }
  out.end_object().end_array();
  write_chunk_ids(out, kind, ids);
  write_record(out, record);
  out.end_object();
  return text;
}

std::string usage_chunk_text(ApiKind kind, const ResponseIds& ids, const TierUsage& usage,
                             const DecisionRecord* record) {
  std::string text;
  JsonWriter out(text);
  out.begin_object().key("choices"_key).begin_array().end_array();
  write_chunk_ids(out, kind, ids);
  write_record(out, record);
  out.key("usage"_key);
  write_usage(out, usage);
  out.end_object();
  return text;
}

std::string revision_chunk_text(ApiKind kind, const ResponseIds& ids, const Revision& revision) {
  std::string text;
  JsonWriter out(text);
  out.begin_object().key("choices"_key).begin_array().end_array();
  write_chunk_ids(out, kind, ids);
  out.key("tandem"_key).begin_object().key("revision"_key);
  write_json(out, revision);
  out.end_object().end_object();
  return text;
}

json content_chunk(ApiKind kind, const ResponseIds& ids, const Piece& piece, bool first) {
  return json::parse(content_chunk_text(kind, ids, piece, first));
}

json finish_chunk(ApiKind kind, const ResponseIds& ids, const std::string& finish_reason) {
  return json::parse(finish_chunk_text(kind, ids, finish_reason, nullptr));
}

json usage_chunk(ApiKind kind, const ResponseIds& ids, const TierUsage& usage) {
  return json::parse(usage_chunk_text(kind, ids, usage, nullptr));
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
