// The prompt cache: a slot keeps its KV cache after a request, and the next request that shares
// a prefix with it prefills only the rest. On the real shipped model (stories260K).

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/generate.h"
#include "test_files.h"

namespace tandem::engine {
namespace {

std::unique_ptr<Engine> open_engine(bool prompt_cache, uint32_t sequences,
                                    size_t store_bytes = size_t{64} << 20) {
  EngineOptions options;
  options.model_path = test::model_path();
  options.max_sequences = sequences;
  options.context_per_sequence = 512;
  options.threads = 1;
  options.prompt_cache = prompt_cache;
  options.prompt_cache_bytes = store_bytes;
  auto opened = Engine::open(options);
  EXPECT_TRUE(opened.ok()) << opened.error().message;
  return opened.ok() ? std::move(opened).value() : nullptr;
}

CompletionSummary run(Engine& engine, const std::string& prompt, int max_tokens = 16) {
  GenerationRequest request;
  request.prompt = prompt;
  request.sampling.temperature = 0.0F;
  request.sampling.max_tokens = max_tokens;
  auto result = generate(engine, std::move(request));
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return result.ok() ? result->summary : CompletionSummary{};
}

int tokens_of(const Engine& engine, const std::string& text) {
  return engine.count_tokens(text, true, false).value();
}

// A growing conversation: each turn is the last prompt, its answer and a new line.
std::vector<std::string> growing_chat(Engine& engine, int turns) {
  std::vector<std::string> prompts{"Once upon a time, there was a little dog."};
  for (int turn = 1; turn < turns; ++turn) {
    const std::string answer = run(engine, prompts.back()).text;
    prompts.push_back(prompts.back() + answer + " Then the sun came out.");
  }
  return prompts;
}

TEST(PromptCacheTest, TheNextTurnPrefillsOnlyWhatFollowsTheSharedPrefix) {
  auto engine = open_engine(true, 1);
  ASSERT_NE(engine, nullptr);
  const std::string first = "Once upon a time, there was a little dog named Max.";
  const auto turn1 = run(*engine, first);
  EXPECT_EQ(turn1.cached_prompt_tokens, 0);

  const std::string second = first + turn1.text + " Max liked to run in the park.";
  const auto turn2 = run(*engine, second);
  // The first prompt is cached whole; the answer too, as far as it tokenizes the same when
  // the next prompt is tokenized in one piece.
  EXPECT_GE(turn2.cached_prompt_tokens, tokens_of(*engine, first) - 1);
  EXPECT_LT(turn2.cached_prompt_tokens, turn2.prompt_tokens);

  const auto stats = engine->stats();
  EXPECT_EQ(stats.prompt_tokens_cached, static_cast<uint64_t>(turn2.cached_prompt_tokens));
  EXPECT_EQ(stats.prompt_tokens_cached + stats.prompt_tokens_prefilled,
            static_cast<uint64_t>(turn1.prompt_tokens + turn2.prompt_tokens));
}

TEST(PromptCacheTest, TheSamePromptAgainDecodesOnlyItsLastToken) {
  auto engine = open_engine(true, 1);
  ASSERT_NE(engine, nullptr);
  const std::string prompt = "The little girl found a shiny red ball under the tree.";
  const auto once = run(*engine, prompt);
  const auto again = run(*engine, prompt);
  EXPECT_EQ(again.cached_prompt_tokens, again.prompt_tokens - 1);
  EXPECT_EQ(again.text, once.text);
}

TEST(PromptCacheTest, GreedyOutputIsTheSameWithAndWithoutTheCache) {
  auto cached = open_engine(true, 2);
  ASSERT_NE(cached, nullptr);
  const auto prompts = growing_chat(*cached, 5);
  auto uncached = open_engine(false, 2);
  ASSERT_NE(uncached, nullptr);
  for (const auto& prompt : prompts) {
    const auto with_cache = run(*cached, prompt, 24);
    const auto without = run(*uncached, prompt, 24);
    EXPECT_EQ(with_cache.text, without.text) << prompt;
    EXPECT_EQ(without.cached_prompt_tokens, 0);
    EXPECT_GT(with_cache.cached_prompt_tokens, 0) << prompt;
  }
  EXPECT_EQ(uncached->stats().prompt_tokens_cached, 0U);
}

TEST(PromptCacheTest, AFreshPromptTakesTheLeastRecentlyUsedSlotAndKeepsTheOtherCache) {
  auto engine = open_engine(true, 2);
  ASSERT_NE(engine, nullptr);
  const std::string system = "Lily and Ben were best friends who liked to play in the garden. ";
  run(*engine, system + "One day they found a frog.");
  // Unrelated: must not evict the garden prefix while a slot without a useful cache is free.
  run(*engine, "A big truck drove down the road.");
  const auto shared = run(*engine, system + "One day they saw a bird.");
  EXPECT_GE(shared.cached_prompt_tokens, tokens_of(*engine, system) - 2);
}

TEST(PromptCacheTest, ClientsSharingASystemPromptReuseIt) {
  auto engine = open_engine(true, 1);
  ASSERT_NE(engine, nullptr);
  const std::string system = "You are a kind storyteller. Tell short stories for children. ";
  run(*engine, system + "Tell me about a cat.");
  const auto other = run(*engine, system + "Tell me about a fish.");
  EXPECT_GE(other.cached_prompt_tokens, tokens_of(*engine, system) - 2);
  EXPECT_LT(other.cached_prompt_tokens, other.prompt_tokens);
}

// A story start of about 60 tokens, different for each `n`.
std::string story(int n) {
  static const char* names[] = {"Tim", "Sue", "Max", "Mia", "Sam", "Lily", "Ben", "Zoe", "Tom"};
  const std::string name = names[n % 9];
  return "Once upon a time, " + name + " lived in a small house near the woods with " +
         std::to_string(n + 2) + " cats. Every morning " + name +
         " walked to the river to look at the fish and sing a happy song to the birds. ";
}

TEST(PromptCacheTest, AConversationPushedOutOfItsSlotComesBackFromHostMemory) {
  auto engine = open_engine(true, 1);
  ASSERT_NE(engine, nullptr);
  const std::string first = story(0);
  const auto turn1 = run(*engine, first);
  run(*engine, story(1));  // takes the only slot: the first conversation goes to host memory
  EXPECT_EQ(engine->stats().prompt_store_entries, 1U);

  const std::string second = first + turn1.text + " Then it rained.";
  const auto turn2 = run(*engine, second, 24);
  EXPECT_GE(turn2.cached_prompt_tokens, tokens_of(*engine, first) - 1);
  const auto stats = engine->stats();
  EXPECT_GE(stats.prompt_tokens_restored, static_cast<uint64_t>(tokens_of(*engine, first) - 1));
  EXPECT_EQ(stats.prompt_store_entries, 1U);  // the second story went there in its turn

  auto uncached = open_engine(false, 1);
  ASSERT_NE(uncached, nullptr);
  EXPECT_EQ(run(*uncached, second, 24).text, turn2.text);  // restored KV, same greedy answer
}

TEST(PromptCacheTest, HostMemoryForPrefixesStaysWithinItsLimit) {
  const size_t limit = size_t{160} << 10;
  auto engine = open_engine(true, 1, limit);
  ASSERT_NE(engine, nullptr);
  for (int n = 0; n < 9; ++n) {
    run(*engine, story(n), 4);
    EXPECT_LE(engine->stats().prompt_store_bytes, limit);
  }
  const auto stats = engine->stats();
  EXPECT_GE(stats.prompt_store_entries, 1U);
  EXPECT_LT(stats.prompt_store_entries, 8U);  // the oldest stories were dropped
  // The most recently evicted story comes back; the first one is gone for good.
  EXPECT_GE(run(*engine, story(7) + "The end.", 4).cached_prompt_tokens,
            tokens_of(*engine, story(7)) - 1);
  EXPECT_LT(run(*engine, story(0) + "The end.", 4).cached_prompt_tokens, 8);
}

TEST(PromptCacheTest, NoHostMemoryForPrefixesWhenItsLimitIsZero) {
  auto engine = open_engine(true, 1, 0);
  ASSERT_NE(engine, nullptr);
  run(*engine, story(0));
  run(*engine, story(1));
  EXPECT_LT(run(*engine, story(0) + "The end.").cached_prompt_tokens, 8);
  EXPECT_EQ(engine->stats().prompt_store_entries, 0U);
  EXPECT_EQ(engine->stats().prompt_tokens_restored, 0U);
}

}  // namespace
}  // namespace tandem::engine
