#pragma once
// The engine's request and result types. Plain data, no llama.cpp types: other components
// (server, routing) build requests and consume events without including llama.h.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/token_signals.h"

namespace tandem::engine {

struct SamplingParams {
  // <= 0 selects greedy decoding: the most likely token, deterministically.
  float temperature = 0.8F;
  float top_p = 0.95F;          // 1 disables
  int top_k = 40;               // 0 disables
  float min_p = 0.05F;          // 0 disables
  float repeat_penalty = 1.0F;  // 1 disables
  int repeat_last_n = 64;
  // OpenAI's penalties, -2 to 2, 0 disables: each subtracted from a token's logit, the first
  // once per time the token was already generated, the second once if it was. They count every
  // token of the answer so far (not the prompt), as OpenAI's do.
  float frequency_penalty = 0.0F;
  float presence_penalty = 0.0F;
  // Same seed, same prompt, same model: same tokens. Unset draws a random seed.
  std::optional<uint32_t> seed;
  int max_tokens = 256;
  // Never sample an end-of-generation token: generate exactly max_tokens (benchmarks).
  bool ignore_eos = false;
  std::vector<std::string> stop;  // at most kMaxStopStrings, none empty
  int top_logprobs = 0;           // alternatives reported per token, 0 to kMaxTopLogprobs
};

inline constexpr int kMaxTopLogprobs = 20;
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr size_t kMaxStopStringBytes = 256;

// Checks every field; the error names the field and the allowed range.
Status validate(const SamplingParams& params);

// Constrained decoding: only what the grammar allows is sampled. Made from a JSON schema
// (response_format) or by the chat template for tool calls (engine/chat_format.h).
struct GrammarTrigger {
  enum class Kind { kWord, kPattern, kPatternFull, kToken };
  Kind kind = Kind::kWord;
  std::string value;   // the word or regular expression; the token's text for kToken
  int32_t token = -1;  // kToken
};

struct Constraint {
  std::string grammar;  // GBNF with a `root` rule; empty: unconstrained
  // The grammar applies only from the first trigger on (a tool call after free text).
  bool lazy = false;
  std::vector<GrammarTrigger> triggers;
  // Special tokens the output parser must see as text (tool-call tags): they are reported in
  // TokenEvent::piece instead of being dropped like other control tokens.
  std::vector<std::string> preserved_tokens;
  // What the template already wrote of the answer (e.g. an opened <think> block): a template's
  // grammar is advanced past it before sampling. Not applied to a client's own grammar.
  std::string generation_prompt;
  bool from_template = false;

  bool empty() const { return grammar.empty() && preserved_tokens.empty(); }
};

struct ChatOutputFormat;  // engine/chat_format.h

struct GenerationRequest {
  // The full prompt text, already rendered through a chat template if it is a chat.
  std::string prompt;
  // Let the tokenizer add BOS/EOS as the model wants (true for a prompt's start).
  bool add_special = true;
  // Parse special tokens written as text (chat templates need it; raw user text must not).
  bool parse_special = false;
  SamplingParams sampling;
  Constraint constraint;
  // How to read the answer back (tool calls, reasoning), from Engine::format_chat(); null for
  // plain text. The engine does not read it: it travels with the request to whoever parses.
  std::shared_ptr<const ChatOutputFormat> answer_format;
};

enum class FinishReason {
  kStop,       // end-of-generation token or a stop string
  kLength,     // max_tokens reached, or the sequence's context is full
  kCancelled,  // the caller cancelled
};

const char* finish_reason_name(FinishReason reason);

// One sampled token. `text` is what became safe to show with this token: it may be empty
// (half a UTF-8 character, or a possible stop string held back) or carry held-back text too.
// The last event of a completion may be a flush (token < 0): text held back until the end,
// with no token of its own.
struct TokenEvent {
  int32_t token = 0;
  bool is_flush() const { return token < 0; }
  std::string piece;  // this token's own bytes, possibly not valid UTF-8 on its own
  std::string text;
  TokenSignals signals;
  std::vector<std::string> top_pieces;  // pieces of signals.top, same order
};

struct CompletionSummary {
  FinishReason finish_reason = FinishReason::kStop;
  std::string text;  // everything released, stop string excluded
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // of prompt_tokens, reused from the slot's KV cache
  int completion_tokens = 0;
  double mean_logprob = 0.0;
  double min_logprob = 0.0;
  double mean_entropy = 0.0;
  double queue_ms = 0.0;                  // submitted -> admitted to a sequence slot
  double prefill_ms = 0.0;                // inside llama_decode with this prompt's tokens
  double time_to_first_token_ms = 0.0;    // submitted -> first token sampled
  double total_ms = 0.0;                  // submitted -> finished
  double decode_tokens_per_second = 0.0;  // completion tokens after the first / their time
};

// Called on the engine's callback thread, never on the inference thread, in order:
// on_token for each token, then exactly one of on_complete or on_error.
struct GenerationCallbacks {
  std::function<void(const TokenEvent&)> on_token;
  std::function<void(const CompletionSummary&)> on_complete;
  std::function<void(const Error&)> on_error;
};

}  // namespace tandem::engine
