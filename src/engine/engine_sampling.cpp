// Sampling: the plain sampler chain of a request, the grammar-constrained one built at submit(),
// and the sampling of one token from a batch's logits, with its signals and text. Everything
// but make_sampler() and token_piece() runs on the inference thread, or (the constrained
// sampler and the preserved tokens, at submit()) reads only what is read-only after open().

#include <algorithm>
#include <random>

#include "engine/engine_state.h"

namespace tandem::engine {
namespace {

bool openai_penalties(const SamplingParams& p) {
  return p.frequency_penalty != 0.0F || p.presence_penalty != 0.0F;
}

bool penalizes(const SamplingParams& p) {
  return (p.repeat_penalty != 1.0F && p.repeat_last_n > 0) || openai_penalties(p);
}

// llama.cpp's penalties read one window of the tokens sampled so far. OpenAI's count the whole
// answer, so with either of them the window is the answer's length (and a repeat penalty set
// beside them reads it too), up to kMaxPenaltyWindow: the window is allocated whole, and no
// edge context holds a longer answer.
constexpr int32_t kMaxPenaltyWindow = 1 << 15;

int32_t penalty_window(const SamplingParams& p) {
  if (!openai_penalties(p)) {
    return p.repeat_last_n;
  }
  return std::max(p.repeat_last_n, std::min(p.max_tokens, kMaxPenaltyWindow));
}

}  // namespace

// The chain follows llama-server's order: bias, penalties, truncation, temperature, draw.
llama_sampler_ptr make_sampler(const SamplingParams& p, int32_t vocab_size,
                               const std::vector<llama_logit_bias>& ban_end_of_generation) {
  llama_sampler_ptr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()));
  if (p.ignore_eos && !ban_end_of_generation.empty()) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_logit_bias(
                                vocab_size, static_cast<int32_t>(ban_end_of_generation.size()),
                                ban_end_of_generation.data()));
  }
  if (penalizes(p)) {
    llama_sampler_chain_add(
        chain.get(), llama_sampler_init_penalties(vocab_size, penalty_window(p), p.repeat_penalty,
                                                  p.frequency_penalty, p.presence_penalty));
  }
  if (p.temperature <= 0.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
    return chain;
  }
  if (p.top_k > 0) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(p.top_k));
  }
  if (p.top_p < 1.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(p.top_p, 1));
  }
  if (p.min_p > 0.0F) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_min_p(p.min_p, 1));
  }
  llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(p.temperature));
  const uint32_t seed = p.seed.value_or(std::random_device{}());
  llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(seed));
  return chain;
}

std::string token_piece(const llama_vocab* vocab, llama_token token, bool special) {
  char small[64];
  int32_t n = llama_token_to_piece(vocab, token, small, sizeof(small), 0, special);
  if (n >= 0) {
    return std::string(small, static_cast<size_t>(n));
  }
  std::string large(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab, token, large.data(), static_cast<int32_t>(large.size()), 0,
                           special);
  large.resize(static_cast<size_t>(std::max(n, 0)));
  return large;
}

// Samples the next token of `slot` from the logits of the last batch and reports it.
void Engine::State::sample(Slot& slot) {
  PendingRequest& req = *slot.active;
  llama_token token = LLAMA_TOKEN_NULL;
  if (req.constrained) {
    token = common_sampler_sample(req.constrained.get(), context.get(), slot.logits_index);
    common_sampler_accept(req.constrained.get(), token, true);
  } else {
    token = llama_sampler_sample(slot.sampler.get(), context.get(), slot.logits_index);
  }
  if (slot.generated == 0) {
    slot.first_token = Clock::now();
  }
  if (llama_vocab_is_eog(vocab, token)) {
    finish(slot, FinishReason::kStop);
    return;
  }
  const float* logits = llama_get_logits_ith(context.get(), slot.logits_index);
  TokenEvent event;
  event.token = token;
  event.signals =
      signal_calculator.compute(std::span<const float>(logits, static_cast<size_t>(vocab_size)),
                                token, req.request.sampling.top_logprobs);
  event.piece = token_piece(vocab, token,
                            std::binary_search(req.preserved.begin(), req.preserved.end(), token));
  event.top_pieces.reserve(event.signals.top.size());
  for (const auto& alternative : event.signals.top) {
    event.top_pieces.push_back(token_piece(vocab, alternative.token));
  }
  const auto update = slot.stream->push(event.piece);
  event.text = update.text;

  slot.logprob_sum += event.signals.logprob;
  slot.logprob_min = slot.generated == 0
                         ? event.signals.logprob
                         : std::min<double>(slot.logprob_min, event.signals.logprob);
  slot.entropy_sum += event.signals.entropy;
  ++slot.generated;
  events->enqueue({req.callbacks, std::move(event)});

  if (update.stopped) {
    finish(slot, FinishReason::kStop);
  } else if (slot.generated >= req.request.sampling.max_tokens ||
             static_cast<uint32_t>(slot.position) + 1 >= context_per_sequence) {
    // position tokens are in the KV cache and one more was just sampled: the sequence holds
    // prompt + completion <= context_per_sequence, as a client counting tokens expects.
    finish(slot, FinishReason::kLength);
  } else {
    slot.next_input = token;
  }
}

// The token `text` is when it is exactly one (special tokens parsed), else nullopt.
std::optional<llama_token> Engine::State::single_token(const std::string& text) const {
  llama_token token = LLAMA_TOKEN_NULL;
  const int32_t n =
      llama_tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), &token, 1, false, true);
  return n == 1 ? std::optional<llama_token>(token) : std::nullopt;
}

std::vector<llama_token> Engine::State::preserved_token_ids(const Constraint& constraint) const {
  std::vector<llama_token> ids;
  for (const auto& text : constraint.preserved_tokens) {
    if (const auto token = single_token(text)) {
      ids.push_back(*token);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// llama.cpp's common sampler for a request with a grammar: the same chain as make_sampler()
// (common_sampler orders penalties, top-k, top-p, min-p and temperature the same way), plus
// the grammar, tried after sampling and applied before a resample when the token breaks it.
Result<CommonSamplerPtr> Engine::State::constrained_sampler(
    const GenerationRequest& request) const {
  const Constraint& c = request.constraint;
  if (c.grammar.empty()) {
    return CommonSamplerPtr();
  }
  const SamplingParams& s = request.sampling;
  common_params_sampling p;
  p.seed = s.seed.value_or(LLAMA_DEFAULT_SEED);
  p.temp = s.temperature;
  p.top_k = s.top_k;
  p.top_p = s.top_p;
  p.min_p = s.min_p;
  p.penalty_repeat = s.repeat_penalty;
  p.penalty_freq = s.frequency_penalty;
  p.penalty_present = s.presence_penalty;
  p.penalty_last_n = penalty_window(s);
  p.ignore_eos = s.ignore_eos;
  if (s.ignore_eos) {
    p.logit_bias_eog = ban_end_of_generation;
  }
  p.no_perf = true;
  p.grammar = common_grammar(
      c.from_template ? COMMON_GRAMMAR_TYPE_OUTPUT_FORMAT : COMMON_GRAMMAR_TYPE_USER, c.grammar);
  p.grammar_lazy = c.lazy;
  p.generation_prompt = c.generation_prompt;
  for (const auto& t : c.triggers) {
    common_grammar_trigger trigger{COMMON_GRAMMAR_TRIGGER_TYPE_WORD, t.value, t.token};
    switch (t.kind) {
      case GrammarTrigger::Kind::kToken: {
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN;
        const auto token =
            t.token >= 0 ? std::optional<llama_token>(t.token) : single_token(t.value);
        if (!token) {
          continue;  // not one token in this vocabulary: it can never be sampled as one
        }
        trigger.token = *token;
        break;
      }
      case GrammarTrigger::Kind::kPattern:
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN;
        break;
      case GrammarTrigger::Kind::kPatternFull:
        trigger.type = COMMON_GRAMMAR_TRIGGER_TYPE_PATTERN_FULL;
        break;
      case GrammarTrigger::Kind::kWord:
        break;
    }
    p.grammar_triggers.push_back(std::move(trigger));
  }
  for (const auto token : preserved_token_ids(c)) {
    p.preserved_tokens.insert(token);
  }
  try {
    CommonSamplerPtr sampler(common_sampler_init(model.get(), p));
    if (sampler) {
      return sampler;
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("the grammar is invalid: ") + e.what());
  }
  return make_error(ErrorCode::kInvalidArgument, "the grammar is invalid (llama.cpp refused it)");
}

}  // namespace tandem::engine
