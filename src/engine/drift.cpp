#include "engine/drift.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <span>
#include <string_view>
#include <thread>
#include <utility>

#include <llama-cpp.h>
#include <llama.h>

#include "engine/engine.h"
#include "engine/gguf_file.h"
#include "engine/llama_backend.h"

namespace tandem::engine {
namespace {

// Prompt tokens per llama_decode call. Every position's logits are kept, so this bounds the
// logits buffer (tokens x vocabulary floats) however long a prompt is.
constexpr size_t kChunkTokens = 512;

// Owns a llama_batch of one sequence whose every token asks for logits.
class TokenBatch {
 public:
  TokenBatch() : batch_(llama_batch_init(static_cast<int32_t>(kChunkTokens), 0, 1)) {}
  ~TokenBatch() { llama_batch_free(batch_); }
  TokenBatch(const TokenBatch&) = delete;
  TokenBatch& operator=(const TokenBatch&) = delete;

  // `tokens` (at most kChunkTokens) at consecutive positions from `first_position`.
  void fill(std::span<const llama_token> tokens, size_t first_position) {
    batch_.n_tokens = 0;
    for (const llama_token token : tokens) {
      const int32_t i = batch_.n_tokens++;
      batch_.token[i] = token;
      batch_.pos[i] = static_cast<llama_pos>(first_position + static_cast<size_t>(i));
      batch_.n_seq_id[i] = 1;
      batch_.seq_id[i][0] = 0;
      batch_.logits[i] = 1;
    }
  }
  const llama_batch& get() const { return batch_; }

 private:
  llama_batch batch_;
};

// One side of the comparison, loaded.
struct LoadedModel {
  std::string role;  // "reference" or "candidate", for messages
  ModelIdentity identity;
  GgufHeader header;
  llama_model_ptr model;
  llama_context_ptr context;
  const llama_vocab* vocab = nullptr;
  int32_t vocab_size = 0;
};

// A next-token distribution: the raw logits (owned by the context until its next decode).
struct Distribution {
  std::span<const float> logits;
  LogSoftmax softmax;
};

Status decode(LoadedModel& loaded, const TokenBatch& batch, const std::string& where) {
  const int32_t rc = llama_decode(loaded.context.get(), batch.get());
  if (rc != 0) {
    return make_error(ErrorCode::kInternal, where + ": llama_decode failed on the " + loaded.role +
                                                " model with code " + std::to_string(rc));
  }
  return {};
}

// The distribution at `row` of the last batch decoded.
Result<Distribution> distribution(LoadedModel& loaded, int32_t row, const std::string& where) {
  const float* logits = llama_get_logits_ith(loaded.context.get(), row);
  if (logits == nullptr) {
    return make_error(ErrorCode::kInternal,
                      where + ": llama.cpp returned no logits for the " + loaded.role + " model");
  }
  const std::span<const float> span(logits, static_cast<size_t>(loaded.vocab_size));
  const auto softmax = log_softmax(span);
  if (!softmax) {
    return make_error(ErrorCode::kInternal,
                      where + ": the " + loaded.role + " model '" + loaded.identity.name +
                          "' produced NaN or infinite logits; the file is broken");
  }
  return Distribution{span, *softmax};
}

void clear_memory(LoadedModel& loaded) {
  llama_memory_clear(llama_get_memory(loaded.context.get()), true);
}

Error with_role(const std::string& role, const Error& error) {
  return make_error(error.code, role + " model: " + error.message);
}

// llama.cpp's loading progress, from 0 to 1, as percent steps of the current phase.
bool report_loading(float done, void* progress) {
  static_cast<Progress*>(progress)->update(static_cast<size_t>(std::lround(done * 100.0F)));
  return true;  // keep loading
}

Result<LoadedModel> open_model(const std::string& path, const std::string& role,
                               Progress& progress) {
  auto header = read_gguf_header(path);
  if (!header) {
    return with_role(role, header.error());
  }
  progress.phase("hashing the " + role + " model", 0);
  auto digest = sha256_file(path);
  if (!digest) {
    return with_role(role, digest.error());
  }
  LoadedModel loaded;
  loaded.role = role;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  loaded.identity =
      identity_from_header(path, ec ? 0 : size, header.value(), std::move(digest).value());
  loaded.header = std::move(header).value();
  if (loaded.identity.context_length == 0 || loaded.identity.layer_count == 0) {
    return make_error(ErrorCode::kInvalidModel,
                      role + " model '" + path + "' lacks " + loaded.identity.architecture +
                          ".context_length or .block_count: not a generative model llama.cpp "
                          "knows");
  }
  llama_model_params params = llama_model_default_params();
  params.n_gpu_layers = 0;
  progress.phase("loading the " + role + " model", 100);
  params.progress_callback = report_loading;
  params.progress_callback_user_data = &progress;
  loaded.model.reset(llama_model_load_from_file(path.c_str(), params));
  if (!loaded.model) {
    return make_error(ErrorCode::kInvalidModel,
                      "llama.cpp could not load the " + role + " model '" + path +
                          "' (unsupported architecture or corrupt tensors; run with --verbose "
                          "for llama.cpp's own message)");
  }
  loaded.vocab = llama_model_get_vocab(loaded.model.get());
  loaded.vocab_size = llama_vocab_n_tokens(loaded.vocab);
  return loaded;
}

// Drift compares distributions over the same token ids: the tokenizers must be one and the same.
Status check_same_vocabulary(const LoadedModel& reference, const LoadedModel& candidate) {
  const std::string both =
      "reference '" + reference.identity.path + "' and candidate '" + candidate.identity.path + "'";
  const std::string why =
      "; drift is defined only between models that share a tokenizer, such as quantizations of "
      "one model";
  if (reference.vocab_size != candidate.vocab_size) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the vocabularies of " + both +
                          " differ: " + std::to_string(reference.vocab_size) + " tokens against " +
                          std::to_string(candidate.vocab_size) + why);
  }
  llama_token differing = LLAMA_TOKEN_NULL;
  for (llama_token token = 0; token < reference.vocab_size; ++token) {
    if (std::string_view(llama_vocab_get_text(reference.vocab, token)) !=
        std::string_view(llama_vocab_get_text(candidate.vocab, token))) {
      differing = token;
      break;
    }
  }
  if (differing != LLAMA_TOKEN_NULL) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "the vocabularies of " + both + " differ: token " + std::to_string(differing) + " is '" +
            llama_vocab_get_text(reference.vocab, differing) + "' in the reference and '" +
            llama_vocab_get_text(candidate.vocab, differing) + "' in the candidate" + why);
  }
  if (llama_vocab_bos(reference.vocab) != llama_vocab_bos(candidate.vocab) ||
      llama_vocab_eos(reference.vocab) != llama_vocab_eos(candidate.vocab)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the vocabularies of " + both + " differ in their BOS/EOS tokens" + why);
  }
  return {};
}

Result<std::vector<llama_token>> tokenize(const llama_vocab* vocab, const DriftPrompt& prompt) {
  if (prompt.text.size() > static_cast<size_t>(INT32_MAX / 2)) {
    return make_error(ErrorCode::kInvalidArgument, prompt.source + ": the prompt is too long");
  }
  const auto length = static_cast<int32_t>(prompt.text.size());
  // Raw text, as `tandem run` sends it: BOS as the model wants, special tokens not parsed.
  const int32_t n = llama_tokenize(vocab, prompt.text.data(), length, nullptr, 0, true, false);
  if (n == INT32_MIN) {
    return make_error(ErrorCode::kInvalidArgument, prompt.source + ": the prompt is too long");
  }
  std::vector<llama_token> tokens(static_cast<size_t>(n < 0 ? -n : n));
  llama_tokenize(vocab, prompt.text.data(), length, tokens.data(),
                 static_cast<int32_t>(tokens.size()), true, false);
  if (tokens.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      prompt.source + ": the prompt tokenizes to nothing");
  }
  return tokens;
}

// The text of a continuation, piece by piece: llama_detokenize would drop the leading space a
// continuation starts with, as if it began a text. Control tokens (end of text) render empty.
std::string continuation_text(const llama_vocab* vocab, const std::vector<llama_token>& tokens) {
  std::string text;
  char piece[128];
  for (const llama_token token : tokens) {
    const int32_t n = llama_token_to_piece(vocab, token, piece, sizeof(piece), 0, false);
    if (n >= 0) {
      text.append(piece, static_cast<size_t>(n));
      continue;
    }
    std::string large(static_cast<size_t>(-n), '\0');
    const int32_t m = llama_token_to_piece(vocab, token, large.data(),
                                           static_cast<int32_t>(large.size()), 0, false);
    text.append(large.data(), static_cast<size_t>(std::max(m, 0)));
  }
  return text;
}

Status create_context(LoadedModel& loaded, uint32_t context_tokens, int threads) {
  llama_context_params params = llama_context_default_params();
  params.n_ctx = context_tokens;
  params.n_batch = static_cast<uint32_t>(kChunkTokens);
  params.n_ubatch = static_cast<uint32_t>(kChunkTokens);
  params.n_seq_max = 1;
  params.n_threads = threads;
  params.n_threads_batch = threads;
  params.no_perf = true;
  loaded.context.reset(llama_init_from_model(loaded.model.get(), params));
  if (!loaded.context) {
    return make_error(ErrorCode::kInternal, "llama.cpp could not create a context of " +
                                                std::to_string(context_tokens) +
                                                " tokens for the " + loaded.role + " model '" +
                                                loaded.identity.name + "'");
  }
  return {};
}

// Both models' first choice at one position.
struct Choices {
  llama_token reference = LLAMA_TOKEN_NULL;
  llama_token candidate = LLAMA_TOKEN_NULL;
};

// Runs prompts through both models in lockstep: the same batches in the same order, so the two
// see exactly the same computation layout and an identical candidate yields identical logits.
class LockstepEvaluator {
 public:
  LockstepEvaluator(LoadedModel& reference, LoadedModel& candidate, int continuation_tokens)
      : reference_(reference),
        candidate_(candidate),
        continuation_tokens_(static_cast<size_t>(continuation_tokens)) {}

  Result<PromptDrift> evaluate(const DriftPrompt& prompt, const std::vector<llama_token>& tokens) {
    PromptDrift out;
    out.source = prompt.source;
    out.prompt = prompt.text;
    out.prompt_tokens = static_cast<int>(tokens.size());
    clear_memory(reference_);
    clear_memory(candidate_);

    // Teacher forcing over the prompt: every position predicts the prompt's next token, the
    // last one predicts the start of the reference's continuation.
    Choices last;
    for (size_t start = 0; start < tokens.size(); start += kChunkTokens) {
      const size_t count = std::min(kChunkTokens, tokens.size() - start);
      batch_.fill(std::span(tokens).subspan(start, count), start);
      if (auto decoded = decode_both(prompt.source); !decoded) {
        return decoded.error();
      }
      for (size_t i = 0; i < count; ++i) {
        const size_t at = start + i;
        const llama_token next = at + 1 < tokens.size() ? tokens[at + 1] : LLAMA_TOKEN_NULL;
        auto choices = score(static_cast<int32_t>(i), next, out, where(prompt, at));
        if (!choices) {
          return choices.error();
        }
        last = choices.value();
      }
    }

    // The reference continues greedily; the candidate is fed the very same tokens.
    std::vector<llama_token> continuation;
    bool candidate_followed = true;  // the candidate's own choice matched at every step
    while (true) {
      continuation.push_back(last.reference);
      candidate_followed = candidate_followed && last.candidate == last.reference;
      if (llama_vocab_is_eog(reference_.vocab, last.reference) ||
          continuation.size() >= continuation_tokens_) {
        break;
      }
      const size_t position = tokens.size() + continuation.size() - 1;
      batch_.fill(std::span(&continuation.back(), 1), position);
      if (auto decoded = decode_both(prompt.source); !decoded) {
        return decoded.error();
      }
      auto choices = score(0, LLAMA_TOKEN_NULL, out, where(prompt, position));
      if (!choices) {
        return choices.error();
      }
      last = choices.value();
    }
    out.continuation_tokens = static_cast<int>(continuation.size());

    // Free-running greedy output. Where the candidate chose the reference's token at every
    // step, its own greedy run would repeat those steps exactly: no need to run it.
    std::vector<llama_token> candidate_output = continuation;
    if (!candidate_followed) {
      auto generated = generate_candidate(prompt, tokens);
      if (!generated) {
        return generated.error();
      }
      candidate_output = std::move(generated).value();
    }
    out.greedy_reference_tokens = static_cast<int>(continuation.size());
    out.greedy_candidate_tokens = static_cast<int>(candidate_output.size());
    const auto mismatch = std::mismatch(continuation.begin(), continuation.end(),
                                        candidate_output.begin(), candidate_output.end());
    out.greedy_common_prefix = static_cast<int>(mismatch.first - continuation.begin());
    out.reference_text = continuation_text(reference_.vocab, continuation);
    out.candidate_text = continuation_text(candidate_.vocab, candidate_output);
    return out;
  }

 private:
  static std::string where(const DriftPrompt& prompt, size_t position) {
    return prompt.source + " (token " + std::to_string(position) + ")";
  }

  Status decode_both(const std::string& source) {
    if (auto status = decode(reference_, batch_, source); !status) {
      return status;
    }
    return decode(candidate_, batch_, source);
  }

  // Compares both distributions at `row` of the last batch and scores `next`, the token that
  // follows (LLAMA_TOKEN_NULL: the reference's own choice, which is what will follow).
  Result<Choices> score(int32_t row, llama_token next, PromptDrift& out, const std::string& at) {
    auto p = distribution(reference_, row, at);
    if (!p) {
      return p.error();
    }
    auto q = distribution(candidate_, row, at);
    if (!q) {
      return q.error();
    }
    const llama_token target = next == LLAMA_TOKEN_NULL ? p->softmax.argmax : next;
    out.token_kl.push_back(kl_divergence(p->logits, p->softmax, q->logits, q->softmax));
    out.top1_agreements += p->softmax.argmax == q->softmax.argmax ? 1 : 0;
    out.reference_nll -= p->softmax.logprob(p->logits, target);
    out.candidate_nll -= q->softmax.logprob(q->logits, target);
    return Choices{p->softmax.argmax, q->softmax.argmax};
  }

  // The candidate's own greedy continuation, prompt decoded in the same chunks as above.
  Result<std::vector<llama_token>> generate_candidate(const DriftPrompt& prompt,
                                                      const std::vector<llama_token>& tokens) {
    clear_memory(candidate_);
    int32_t last_row = 0;
    for (size_t start = 0; start < tokens.size(); start += kChunkTokens) {
      const size_t count = std::min(kChunkTokens, tokens.size() - start);
      batch_.fill(std::span(tokens).subspan(start, count), start);
      if (auto decoded = decode(candidate_, batch_, prompt.source); !decoded) {
        return decoded.error();
      }
      last_row = static_cast<int32_t>(count) - 1;
    }
    std::vector<llama_token> output;
    while (true) {
      const size_t position = tokens.size() + output.size();
      auto q = distribution(candidate_, last_row, where(prompt, position));
      if (!q) {
        return q.error();
      }
      output.push_back(q->softmax.argmax);
      if (llama_vocab_is_eog(candidate_.vocab, output.back()) ||
          output.size() >= continuation_tokens_) {
        return output;
      }
      batch_.fill(std::span(&output.back(), 1), position);
      if (auto decoded = decode(candidate_, batch_, prompt.source); !decoded) {
        return decoded.error();
      }
      last_row = 0;
    }
  }

  LoadedModel& reference_;
  LoadedModel& candidate_;
  size_t continuation_tokens_;
  TokenBatch batch_;
};

Status validate_options(const DriftOptions& options, const std::vector<DriftPrompt>& prompts) {
  if (options.continuation_tokens < 1 ||
      options.continuation_tokens > kMaxDriftContinuationTokens) {
    return make_error(ErrorCode::kInvalidArgument, "continuation tokens must be between 1 and " +
                                                       std::to_string(kMaxDriftContinuationTokens));
  }
  if (options.threads < 0) {
    return make_error(ErrorCode::kInvalidArgument, "threads must be >= 0 (0: automatic)");
  }
  if (prompts.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "no prompts to measure drift on");
  }
  return validate(options.limits);
}

Status check_memory(const LoadedModel& reference, const LoadedModel& candidate,
                    uint32_t context_tokens) {
  const auto chunk = static_cast<uint32_t>(kChunkTokens);
  const uint64_t need = saturating_add(
      estimate_memory(reference.header, reference.identity, context_tokens, 1, chunk).total(),
      estimate_memory(candidate.header, candidate.identity, context_tokens, 1, chunk).total());
  const auto available = available_memory_bytes();
  if (available && need > *available) {
    return make_error(ErrorCode::kInsufficientMemory,
                      "measuring drift holds both models at once and needs about " +
                          std::to_string(need >> 20) + " MiB, but only " +
                          std::to_string(*available >> 20) +
                          " MiB is available; use shorter prompts or fewer --tokens");
  }
  return {};
}

}  // namespace

Result<DriftReport> measure_drift(const DriftOptions& options,
                                  const std::vector<DriftPrompt>& prompts, Progress& progress) {
  if (auto valid = validate_options(options, prompts); !valid) {
    return valid.error();
  }
  ensure_llama_backend();
  auto reference = open_model(options.reference_path, "reference", progress);
  if (!reference) {
    return reference.error();
  }
  auto candidate = open_model(options.candidate_path, "candidate", progress);
  if (!candidate) {
    return candidate.error();
  }
  if (auto same = check_same_vocabulary(reference.value(), candidate.value()); !same) {
    return same.error();
  }

  // Every prompt plus its continuation must fit the context both models were trained with.
  const uint64_t trained =
      std::min(reference->identity.context_length, candidate->identity.context_length);
  const auto continuation = static_cast<uint64_t>(options.continuation_tokens);
  std::vector<std::vector<llama_token>> tokenized;
  uint64_t longest = 0;
  for (const auto& prompt : prompts) {
    auto tokens = tokenize(reference->vocab, prompt);
    if (!tokens) {
      return tokens.error();
    }
    if (tokens->size() + continuation > trained) {
      return make_error(ErrorCode::kContextOverflow,
                        prompt.source + ": the prompt is " + std::to_string(tokens->size()) +
                            " tokens; with " + std::to_string(continuation) +
                            " continuation tokens it exceeds the models' trained context of " +
                            std::to_string(trained) + " tokens");
    }
    longest = std::max<uint64_t>(longest, tokens->size());
    tokenized.push_back(std::move(tokens).value());
  }
  const auto context_tokens = static_cast<uint32_t>(longest + continuation);
  if (auto memory = check_memory(reference.value(), candidate.value(), context_tokens); !memory) {
    return memory.error();
  }
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  for (LoadedModel* loaded : {&reference.value(), &candidate.value()}) {
    if (auto created = create_context(*loaded, context_tokens, threads); !created) {
      return created.error();
    }
  }

  DriftReport report;
  report.continuation_tokens = options.continuation_tokens;
  report.limits = options.limits;
  LockstepEvaluator evaluator(reference.value(), candidate.value(), options.continuation_tokens);
  progress.phase("measuring drift on prompts", prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto measured = evaluator.evaluate(prompts[i], tokenized[i]);
    if (!measured) {
      return measured.error();
    }
    report.prompts.push_back(std::move(measured).value());
    progress.update(i + 1);
  }
  report.summary = summarize(report.prompts);
  report.violations = check_limits(report.summary, options.limits);
  report.reference = reference->identity;
  report.candidate = candidate->identity;
  return report;
}

}  // namespace tandem::engine
