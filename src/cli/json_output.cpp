#include "cli/json_output.h"

#include "engine/text_stream.h"

namespace tandem::cli {

using json = nlohmann::ordered_json;

json to_json(const engine::ModelIdentity& id) {
  return json{{"path", id.path},
              {"name", id.name},
              {"architecture", id.architecture},
              {"parameter_count", id.parameter_count},
              {"quantization", id.quantization},
              {"file_size_bytes", id.file_size_bytes},
              {"sha256", id.sha256},
              {"context_length", id.context_length},
              {"layer_count", id.layer_count},
              {"embedding_length", id.embedding_length},
              {"head_count", id.head_count},
              {"head_count_kv", id.head_count_kv},
              {"vocab_size", id.vocab_size},
              {"chat_template", id.has_chat_template ? "model" : "plain"}};
}

json to_json(const engine::Completion& completion, const engine::ModelIdentity& model) {
  const auto& s = completion.summary;
  json tokens = json::array();
  for (const auto& event : completion.tokens) {
    json top = json::array();
    for (size_t i = 0; i < event.signals.top.size(); ++i) {
      top.push_back({{"text", engine::utf8_sanitize(event.top_pieces[i])},
                     {"id", event.signals.top[i].token},
                     {"logprob", event.signals.top[i].logprob}});
    }
    tokens.push_back({{"text", engine::utf8_sanitize(event.piece)},
                      {"id", event.token},
                      {"logprob", event.signals.logprob},
                      {"entropy", event.signals.entropy},
                      {"margin", event.signals.margin},
                      {"top", std::move(top)}});
  }
  return json{{"text", s.text},
              {"finish_reason", engine::finish_reason_name(s.finish_reason)},
              {"usage",
               {{"prompt_tokens", s.prompt_tokens},
                {"completion_tokens", s.completion_tokens},
                {"total_tokens", s.prompt_tokens + s.completion_tokens}}},
              {"confidence",
               {{"mean_logprob", s.mean_logprob},
                {"min_logprob", s.min_logprob},
                {"mean_entropy", s.mean_entropy}}},
              {"timings",
               {{"queue_ms", s.queue_ms},
                {"prefill_ms", s.prefill_ms},
                {"time_to_first_token_ms", s.time_to_first_token_ms},
                {"total_ms", s.total_ms},
                {"decode_tokens_per_second", s.decode_tokens_per_second}}},
              {"model", {{"name", model.name}, {"sha256", model.sha256}}},
              {"tokens", std::move(tokens)}};
}

}  // namespace tandem::cli
