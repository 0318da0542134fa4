// The edge engine on the real shipped model (stories260K through llama.cpp).

#include "engine/engine.h"

#include <chrono>
#include <cmath>
#include <future>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "engine/generate.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

using test::model_path;

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    EngineOptions options;
    options.model_path = model_path();
    options.max_sequences = 4;
    options.context_per_sequence = 512;
    auto opened = Engine::open(options);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    engine_ = std::move(opened).value().release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  static GenerationRequest greedy(const std::string& prompt, int max_tokens) {
    GenerationRequest request;
    request.prompt = prompt;
    request.sampling.temperature = 0.0F;
    request.sampling.max_tokens = max_tokens;
    request.sampling.top_logprobs = 5;
    return request;
  }

  static Completion run(GenerationRequest request) {
    auto result = generate(*engine_, std::move(request));
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return result.ok() ? std::move(result).value() : Completion{};
  }

  static Engine* engine_;
};

Engine* EngineTest::engine_ = nullptr;

TEST_F(EngineTest, ReportsTheModelIdentity) {
  const auto& id = engine_->model();
  EXPECT_EQ(id.architecture, "llama");
  EXPECT_EQ(id.sha256, "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
  EXPECT_EQ(engine_->chat_template().kind(), "plain");
  EXPECT_EQ(engine_->context_per_sequence(), 512U);
}

TEST_F(EngineTest, GreedyContinuationIsTheKnownStory) {
  auto completion = run(greedy("Once upon a time", 24));
  EXPECT_EQ(completion.summary.text.rfind(", there was a little girl named Lily", 0), 0U)
      << completion.summary.text;
  EXPECT_EQ(completion.summary.finish_reason, FinishReason::kLength);
  EXPECT_EQ(completion.summary.completion_tokens, 24);
  EXPECT_EQ(completion.tokens.size(), 24U);
  EXPECT_GT(completion.summary.prompt_tokens, 1);
  EXPECT_GT(completion.summary.decode_tokens_per_second, 0.0);
  EXPECT_GE(completion.summary.time_to_first_token_ms, 0.0);
}

TEST_F(EngineTest, StreamedTextConcatenatesToTheCompletion) {
  std::string streamed;
  auto result = generate(*engine_, greedy("Once upon a time", 40),
                         [&](const TokenEvent& event) { streamed += event.text; });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(streamed, result->summary.text);
}

TEST_F(EngineTest, LogprobsAreRealDistributions) {
  auto completion = run(greedy("Once upon a time", 16));
  ASSERT_FALSE(completion.tokens.empty());
  double logprob_sum = 0.0;
  double min_logprob = 0.0;
  for (size_t i = 0; i < completion.tokens.size(); ++i) {
    const auto& token = completion.tokens[i];
    ASSERT_EQ(token.signals.top.size(), 5U);
    ASSERT_EQ(token.top_pieces.size(), 5U);
    // Greedy picks the most likely token, so it heads the alternatives with the same logprob.
    EXPECT_EQ(token.signals.top[0].token, token.token);
    EXPECT_FLOAT_EQ(token.signals.top[0].logprob, token.signals.logprob);
    double mass = 0.0;
    for (size_t k = 0; k < token.signals.top.size(); ++k) {
      mass += std::exp(token.signals.top[k].logprob);
      if (k > 0) {
        EXPECT_LE(token.signals.top[k].logprob, token.signals.top[k - 1].logprob);
      }
    }
    EXPECT_LE(mass, 1.0 + 1e-5);
    EXPECT_GT(mass, 0.0);
    EXPECT_GE(token.signals.entropy, 0.0F);
    EXPECT_LE(token.signals.logprob, 0.0F);
    EXPECT_GE(token.signals.margin, 0.0F);
    logprob_sum += token.signals.logprob;
    min_logprob =
        i == 0 ? token.signals.logprob : std::min<double>(min_logprob, token.signals.logprob);
  }
  EXPECT_NEAR(completion.summary.mean_logprob, logprob_sum / completion.tokens.size(), 1e-6);
  EXPECT_NEAR(completion.summary.min_logprob, min_logprob, 1e-6);
  EXPECT_GT(completion.summary.mean_entropy, 0.0);
}

TEST_F(EngineTest, SampledTokenAppearsAmongAlternativesWithItsLogprob) {
  auto request = greedy("Once upon a time", 32);
  request.sampling.temperature = 1.0F;
  request.sampling.top_k = 0;
  request.sampling.top_p = 1.0F;
  request.sampling.min_p = 0.0F;
  request.sampling.seed = 7;
  request.sampling.top_logprobs = 20;
  auto completion = run(request);
  for (const auto& token : completion.tokens) {
    for (const auto& alternative : token.signals.top) {
      if (alternative.token == token.token) {
        EXPECT_FLOAT_EQ(alternative.logprob, token.signals.logprob);
      }
    }
  }
}

TEST_F(EngineTest, SeedReproducesItsSample) {
  auto request = greedy("Once upon a time", 48);
  request.sampling.temperature = 1.0F;
  request.sampling.seed = 42;
  auto first = run(request);
  auto second = run(request);
  EXPECT_EQ(first.summary.text, second.summary.text);
  request.sampling.seed = 43;
  auto other = run(request);
  EXPECT_NE(first.summary.text, other.summary.text);
}

TEST_F(EngineTest, StopStringsCutExactly) {
  const auto full = run(greedy("Once upon a time", 40)).summary.text;
  const std::string stop = "Lily";
  ASSERT_NE(full.find(stop), std::string::npos) << full;
  auto request = greedy("Once upon a time", 40);
  request.sampling.stop = {stop};
  std::string streamed;
  auto result = generate(*engine_, request, [&](const TokenEvent& e) { streamed += e.text; });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->summary.finish_reason, FinishReason::kStop);
  EXPECT_EQ(result->summary.text, full.substr(0, full.find(stop)));
  EXPECT_EQ(streamed, result->summary.text);  // no part of the stop string was ever streamed
}

TEST_F(EngineTest, StopStringStartingMidTokenCutsInsideTheToken) {
  const auto full = run(greedy("Once upon a time", 40)).summary.text;
  const auto at = full.find("ittle");  // starts inside the token " little"
  ASSERT_NE(at, std::string::npos);
  auto request = greedy("Once upon a time", 40);
  request.sampling.stop = {"ittle"};
  auto completion = run(request);
  EXPECT_EQ(completion.summary.text, full.substr(0, at));
}

TEST_F(EngineTest, CancellationStopsGeneration) {
  // An engine of its own, with room for a long generation on one thread: the cancel comes a
  // few milliseconds after the first token, and the 2,000 tokens it must cut short take most of
  // a second even on a fast machine, so a slow or sanitised test thread still cancels in time
  // (and one decoding thread leaves the cores to it rather than spinning on them).
  EngineOptions options;
  options.model_path = model_path();
  options.threads = 1;
  options.max_sequences = 1;
  options.context_per_sequence = 2048;
  auto opened = Engine::open(options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Engine& engine = *opened.value();
  constexpr int kMaxTokens = 2000;

  std::promise<void> first_token;
  std::atomic<bool> signalled{false};
  std::promise<CompletionSummary> done;
  GenerationCallbacks callbacks;
  callbacks.on_token = [&](const TokenEvent&) {
    if (!signalled.exchange(true)) {
      first_token.set_value();
    }
  };
  callbacks.on_complete = [&](const CompletionSummary& s) { done.set_value(s); };
  callbacks.on_error = [&](const Error& e) { FAIL() << e.message; };
  auto request = greedy("Once upon a time", kMaxTokens);
  request.sampling.ignore_eos = true;
  auto handle = engine.submit(request, callbacks);
  ASSERT_TRUE(handle.ok());
  first_token.get_future().wait();
  handle.value()->cancel();
  auto summary = done.get_future().get();
  EXPECT_EQ(summary.finish_reason, FinishReason::kCancelled);
  EXPECT_LT(summary.completion_tokens, kMaxTokens);
}

TEST_F(EngineTest, ConcurrentGenerationsEqualTheirSequentialResults) {
  const std::vector<std::string> prompts = {"Once upon a time", "The cat", "Tom and Sam went",
                                            "One day, a little bird"};
  std::vector<Completion> sequential;
  for (const auto& prompt : prompts) {
    sequential.push_back(run(greedy(prompt, 48)));
  }
  std::vector<std::future<Result<Completion>>> futures;
  for (const auto& prompt : prompts) {
    futures.push_back(std::async(std::launch::async,
                                 [&, prompt] { return generate(*engine_, greedy(prompt, 48)); }));
  }
  size_t compared = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto concurrent = futures[i].get();
    ASSERT_TRUE(concurrent.ok()) << concurrent.error().message;
    ASSERT_EQ(concurrent->tokens.size(), sequential[i].tokens.size());
    bool whole = true;
    for (size_t t = 0; t < concurrent->tokens.size(); ++t) {
      const auto& alone = sequential[i].tokens[t];
      const auto& batched = concurrent->tokens[t];
      // Batched decoding sums in another order, so logits agree to a few 1e-3 nats, not
      // bit for bit. Where the top two tokens are that close, greedy may legitimately pick
      // the other one and the texts diverge from there: compare up to such a near-tie.
      EXPECT_EQ(batched.token, alone.token) << prompts[i] << ", token " << t;
      EXPECT_NEAR(batched.signals.logprob, alone.signals.logprob, 5e-3);
      EXPECT_NEAR(batched.signals.entropy, alone.signals.entropy, 5e-3);
      ++compared;
      if (alone.signals.margin < 0.02F) {
        whole = false;
        break;
      }
    }
    if (whole) {
      EXPECT_EQ(concurrent->summary.text, sequential[i].summary.text);
    }
  }
  EXPECT_GE(compared, 96U);  // at least half of all tokens were compared
}

TEST_F(EngineTest, MoreRequestsThanSlotsWaitInTheQueue) {
  std::vector<std::future<Result<Completion>>> futures;
  for (int i = 0; i < 10; ++i) {
    futures.push_back(std::async(
        std::launch::async, [] { return generate(*engine_, greedy("Once upon a time", 16)); }));
  }
  for (auto& f : futures) {
    auto result = f.get();
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->summary.completion_tokens, 16);
  }
}

TEST_F(EngineTest, CallbacksDoNotStallDecoding) {
  // A callback that blocks must not hold up the inference thread: while the first callback
  // of one request is blocked, that request and a second one submitted meanwhile both finish
  // decoding (the engine counts completions on the inference thread).
  const uint64_t baseline = engine_->stats().completed;
  std::promise<void> slow_started;
  std::atomic<bool> once{false};
  std::atomic<bool> decoded_while_blocked{false};
  std::promise<void> slow_done;
  GenerationCallbacks slow;
  slow.on_token = [&](const TokenEvent&) {
    if (once.exchange(true)) {
      return;
    }
    slow_started.set_value();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (engine_->stats().completed >= baseline + 2) {
        decoded_while_blocked = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  slow.on_complete = [&](const CompletionSummary&) { slow_done.set_value(); };
  ASSERT_TRUE(engine_->submit(greedy("Once upon a time", 8), slow).ok());
  slow_started.get_future().wait();
  auto fast = generate(*engine_, greedy("The cat", 32));
  ASSERT_TRUE(fast.ok());
  EXPECT_TRUE(decoded_while_blocked);
  slow_done.get_future().wait();
}

TEST_F(EngineTest, PromptLongerThanTheContextIsAnError) {
  std::string prompt;
  for (int i = 0; i < 400; ++i) {
    prompt += "the big dog ran ";
  }
  auto handle = engine_->submit(greedy(prompt, 8), {});
  ASSERT_FALSE(handle.ok());
  EXPECT_EQ(handle.error().code, ErrorCode::kContextOverflow);
  EXPECT_NE(handle.error().message.find("at most 512"), std::string::npos)
      << handle.error().message;
}

TEST_F(EngineTest, GenerationStopsAtTheEndOfTheContext) {
  std::string prompt;
  for (int i = 0; i < 120; ++i) {
    prompt += "Lily ";
  }
  auto count = engine_->count_tokens(prompt, true, false);
  ASSERT_TRUE(count.ok());
  ASSERT_LT(count.value(), 500);
  auto request = greedy(prompt, 10000);
  request.sampling.ignore_eos = true;
  auto completion = run(request);
  EXPECT_EQ(completion.summary.finish_reason, FinishReason::kLength);
  EXPECT_LE(completion.summary.prompt_tokens + completion.summary.completion_tokens, 512);
}

// Tokens of the answer that it already holds: what OpenAI's penalties act on.
size_t repeated_tokens(const Completion& completion) {
  std::set<int32_t> seen;
  size_t repeats = 0;
  for (const auto& event : completion.tokens) {
    repeats += seen.insert(event.token).second ? 0 : 1;
  }
  return repeats;
}

// Greedy decoding of the story model repeats itself ("Lily ... Lily"); OpenAI's penalties, set
// on the request, change which tokens are drawn again, and a negative one invites repeats.
TEST_F(EngineTest, OpenAiPenaltiesActOnTheAnswersOwnTokens) {
  const Completion plain = run(greedy("Once upon a time", 64));
  auto request = greedy("Once upon a time", 64);
  request.sampling.frequency_penalty = 2.0F;
  const Completion frequency = run(request);
  request.sampling.frequency_penalty = 0.0F;
  request.sampling.presence_penalty = 2.0F;
  const Completion presence = run(request);
  request.sampling.presence_penalty = -2.0F;
  const Completion invited = run(request);
  const size_t base = repeated_tokens(plain);
  ASSERT_GT(base, 8U) << plain.summary.text;
  EXPECT_LT(repeated_tokens(frequency), base) << frequency.summary.text;
  EXPECT_LT(repeated_tokens(presence), base) << presence.summary.text;
  EXPECT_GT(repeated_tokens(invited), base) << invited.summary.text;
  // The first token has nothing before it in the answer: the prompt is not penalised.
  ASSERT_FALSE(frequency.tokens.empty());
  EXPECT_EQ(frequency.tokens.front().token, plain.tokens.front().token);
}

TEST_F(EngineTest, InvalidRequestsAreRejectedWithTheField) {
  auto request = greedy("Once upon a time", 8);
  request.sampling.top_p = 0.0F;
  auto handle = engine_->submit(request, {});
  ASSERT_FALSE(handle.ok());
  EXPECT_EQ(handle.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(handle.error().message.find("top_p"), std::string::npos);

  auto empty = engine_->submit(greedy("", 8), {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);

  auto request2 = greedy("x", 8);
  request2.sampling.stop = {""};
  EXPECT_FALSE(engine_->submit(request2, {}).ok());

  auto request3 = greedy("x", 8);
  request3.sampling.presence_penalty = 2.5F;
  auto penalty = engine_->submit(request3, {});
  ASSERT_FALSE(penalty.ok());
  EXPECT_NE(penalty.error().message.find("presence_penalty"), std::string::npos);
}

// Engines with special options, opened per test.

TEST(EngineOpenTest, FullQueueAnswersBusy) {
  EngineOptions options;
  options.model_path = model_path();
  options.max_sequences = 1;
  options.max_queued_requests = 1;
  auto opened = Engine::open(options);
  ASSERT_TRUE(opened.ok());
  auto& engine = *opened.value();
  std::vector<std::shared_ptr<RequestHandle>> handles;
  GenerationRequest request;
  request.prompt = "Once upon a time";
  request.sampling.max_tokens = 2000;
  request.sampling.ignore_eos = true;
  bool saw_busy = false;
  for (int i = 0; i < 5 && !saw_busy; ++i) {
    auto handle = engine.submit(request, {});
    if (handle.ok()) {
      handles.push_back(handle.value());
    } else {
      EXPECT_EQ(handle.error().code, ErrorCode::kBusy);
      EXPECT_NE(handle.error().message.find("busy"), std::string::npos);
      saw_busy = true;
    }
  }
  EXPECT_TRUE(saw_busy);
  for (auto& h : handles) {
    h->cancel();
  }
}

TEST(EngineOpenTest, ShutdownAnswersEveryPendingRequest) {
  std::atomic<int> errors{0};
  {
    EngineOptions options;
    options.model_path = model_path();
    options.max_sequences = 1;
    auto opened = Engine::open(options);
    ASSERT_TRUE(opened.ok());
    GenerationRequest request;
    request.prompt = "Once upon a time";
    request.sampling.max_tokens = 2000;
    request.sampling.ignore_eos = true;
    GenerationCallbacks callbacks;
    callbacks.on_error = [&](const Error& e) {
      EXPECT_EQ(e.code, ErrorCode::kShuttingDown);
      ++errors;
    };
    callbacks.on_complete = [](const CompletionSummary&) {};
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(opened.value()->submit(request, callbacks).ok());
    }
  }
  EXPECT_EQ(errors.load(), 3);
}

TEST(EngineOpenTest, CorruptOrTruncatedModelsAreErrorsNotCrashes) {
  const std::string model = test::read_file(model_path());
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"truncated.gguf", model.substr(0, model.size() / 3)},
           {"header_only.gguf", model.substr(0, 40)},
           {"text.gguf", "this is not a model\n"},
           {"empty.gguf", ""}}) {
    SCOPED_TRACE(name);
    EngineOptions options;
    options.model_path = test::write_temp_file(name, bytes);
    auto opened = Engine::open(options);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().code, ErrorCode::kInvalidModel);
  }
  EngineOptions missing;
  missing.model_path = "/does/not/exist.gguf";
  auto opened = Engine::open(missing);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kNotFound);
}

TEST(EngineOpenTest, ModelThatDoesNotFitInMemoryIsRefusedBeforeLoading) {
  EngineOptions options;
  options.model_path = model_path();
  options.memory_limit_bytes = 1 << 20;  // 1 MiB: the weights alone are larger
  auto opened = Engine::open(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kInsufficientMemory);
  EXPECT_NE(opened.error().message.find("only 1 MiB is available"), std::string::npos)
      << opened.error().message;
}

TEST(EngineOpenTest, MemoryEstimateGrowsWithContextAndSequences) {
  auto header = read_gguf_header(model_path());
  ASSERT_TRUE(header.ok());
  auto id = identity_from_header(model_path(), 0, header.value(), "");
  auto small = estimate_memory(header.value(), id, 512, 1, 512);
  auto large = estimate_memory(header.value(), id, 2048, 4, 512);
  EXPECT_EQ(small.weights_bytes, large.weights_bytes);
  // 5 layers x 4 KV heads x (8 + 8) dims x 2 bytes per token.
  EXPECT_EQ(small.kv_cache_bytes, 512U * 5 * 4 * 16 * 2);
  EXPECT_EQ(large.kv_cache_bytes, small.kv_cache_bytes * 16);
}

// A crafted header's counts saturate the estimate instead of wrapping it into "fits".
TEST(EngineOpenTest, AnEstimateFromHugeHeaderCountsSaturates) {
  auto header = read_gguf_header(model_path());
  ASSERT_TRUE(header.ok());
  auto id = identity_from_header(model_path(), 0, header.value(), "");
  id.layer_count = uint64_t{1} << 40;
  id.head_count_kv = uint64_t{1} << 40;
  const auto estimate = estimate_memory(header.value(), id, 4096, 4, 512);
  EXPECT_EQ(estimate.kv_cache_bytes, UINT64_MAX);
  EXPECT_EQ(estimate.total(), UINT64_MAX);
  id.vocab_size = UINT64_MAX / 2;
  EXPECT_EQ(estimate_memory(header.value(), id, 512, 1, 512).buffers_bytes, UINT64_MAX);
}

TEST(EngineOpenTest, InvalidOptionsAreRejected) {
  EngineOptions options;
  options.model_path = model_path();
  options.max_sequences = 0;
  EXPECT_FALSE(Engine::open(options).ok());
}

}  // namespace
}  // namespace tandem::engine
