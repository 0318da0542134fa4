// Common sense as data: pairs of prompts where one is plainly harder than the other by the
// seeds' decision framework (tests/routing/cases/golden_pairs.jsonl, English and Chinese, every
// task family). They were written apart from the router and are never used to train or tune
// it (the cues, the prior and the task model learned from bench/data/router_dev_pairs*.jsonl,
// six sets by other authors): a check of what it learned, not a target it was fitted to.
//
// The goal is 9 in 10 ordered in each language. The shipped router orders 53 of 54 English
// and 53 of 54 Chinese pairs (98%); before the task model, 46 and 48 (85%, 89%).
//
// The fresh sets (bench/data/router_fresh_pairs*.jsonl, docs/ROUTING_QUALITY.md) were each
// written after the router they were first scored on, by authors who saw neither the router
// nor the other sets; in about a third of their pairs the easy prompt is the longer one, so
// prompt length alone cannot order them. They are checked here with the same floors, so a
// router change that loses what it never saw fails here. None of these files may ever be used
// to train or tune.
//
// The multilingual sets (Spanish, French, German, Portuguese, Italian, Russian, Japanese,
// Korean; then Arabic, Hindi, Turkish, Vietnamese, Indonesian, Dutch, Polish, Thai; then
// Ukrainian and Persian; then Hebrew, Bengali, Urdu, Swahili and Greek; then Tamil, Telugu,
// Marathi, Gujarati and Punjabi) test the cues of those
// languages, which are read by words and phrases alone: the task model learned English and Chinese.
// Their floor is 8 in 10 per language (length alone orders 2 in 3 of them); the first, written by
// an author who saw nothing of the router, was ordered 130 of 144 when first scored (78% to 100%
// per language) and is a development set since; the second, written after the cue lists were final,
// 89 of 96 (83% to 100%). The third and fourth hold Arabic, Hindi, Turkish, Vietnamese, Indonesian,
// Dutch, Polish and Thai: the third, by an author who saw nothing of the router, was ordered 100 of
// 144 before those languages had cues and 122 after (Thai, whose phrases came later, 16 of 18 when
// they did), and is a development set since; the fourth, written after all the lists were final, 87
// of 96 (83% to 100% per language) when first scored. The fifth, Ukrainian and Persian, written
// apart from their lists, 35 of 36 when first scored (23 before the lists). The sixth and seventh
// hold Hebrew, Bengali, Urdu, Swahili and Greek, their floor 3 in 4: the sixth, by an author who
// saw nothing of the router, was ordered 68 of 90 before those languages had cues and 76 with the
// first lists, and is a development set since (81 after the verb forms its misorders showed);
// the seventh, written after the lists were final, 51 of 60 (75% to 92% per language) when
// first scored (37 before). The eighth, Tamil, Telugu, Marathi, Gujarati and Punjabi, written
// apart from their lists, 48 of 60 before them and after: its misorders are all a long easy
// request over pasted material. The ninth, eight of the languages in six pairs each, written by
// two authors who saw nothing of the task model's stand-in and scored before and after it (43
// and 44 of 48), holds 2 in 3.
//
// Short prompts on both sides, phone-typed chat, Chinese with English terms, everyday users and
// specialists (12 pairs per language each; docs/ROUTING_QUALITY.md) hold the same 8 in 10, the
// chat set 3 in 4 (where it was first scored: its English misorders are hard by their situation,
// not by a task verb); the code-switched set, all Chinese, 9 in 10.

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "routing/complexity_model.h"
#include "routing/router.h"

namespace tandem::routing {
namespace {

struct Pair {
  std::string id;
  std::string lang;
  std::string easy;
  std::string hard;
};

std::vector<Pair> load_pairs(const std::string& file) {
  std::vector<Pair> pairs;
  std::ifstream in(std::string(TANDEM_SOURCE_DIR "/") + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      continue;
    }
    const auto row = nlohmann::json::parse(line);
    pairs.push_back({row.at("id").get<std::string>(), row.at("lang").get<std::string>(),
                     row.at("easy").get<std::string>(), row.at("hard").get<std::string>()});
  }
  return pairs;
}

double score(const std::string& prompt) {
  PromptView view;
  view.last_user = prompt;
  view.total_chars = prompt.size();
  return ComplexityModel::builtin().score(extract_features(view));
}

struct Tally {
  size_t pairs = 0;
  size_t ordered = 0;
};

// A file of pairs, how many languages it holds, and the share of each language's pairs the
// shipped router must order.
struct PairFile {
  std::string path;
  size_t languages = 2;
  double floor = 0.9;
};

class PromptPairs : public ::testing::TestWithParam<PairFile> {};

// "bench/data/router_fresh_pairs_2.jsonl" -> "router_fresh_pairs_2".
std::string test_name(const PairFile& file) {
  const size_t slash = file.path.rfind('/');
  return file.path.substr(slash + 1, file.path.rfind('.') - slash - 1);
}

TEST_P(PromptPairs, TheShippedRouterOrdersMostPairsInEachLanguage) {
  const auto pairs = load_pairs(GetParam().path);
  ASSERT_GE(pairs.size(), 6u * GetParam().languages) << GetParam().path;  // 6 or more per language
  std::map<std::string, Tally> by_lang;
  for (const auto& pair : pairs) {
    Tally& tally = by_lang[pair.lang];
    ++tally.pairs;
    const double easy = score(pair.easy);
    const double hard = score(pair.hard);
    if (hard > easy) {
      ++tally.ordered;
    } else {
      std::cout << "misordered " << pair.id << ": easy " << easy << " >= hard " << hard << "\n";
    }
  }
  ASSERT_EQ(by_lang.size(), GetParam().languages);
  for (const auto& [lang, tally] : by_lang) {
    const double share = static_cast<double>(tally.ordered) / static_cast<double>(tally.pairs);
    std::cout << lang << ": " << tally.ordered << " of " << tally.pairs << " ordered\n";
    RecordProperty("ordered_" + lang, std::to_string(share));
    EXPECT_GE(share, GetParam().floor) << lang << ": " << tally.ordered << " of " << tally.pairs;
  }
}

Decision decide_default(const Router& router, const std::string& prompt) {
  RouteInput input;
  input.text = prompt;
  input.prompt.last_user = input.text;
  input.prompt.total_chars = input.text.size();
  return router.decide(router.signals(input), HealthSnapshot{});
}

// With the default configuration, where the decision lands. The default is the cascade with a
// narrow ingress gate (docs/ROUTING_QUALITY.md: a wider gate only spends the cloud on every
// model pair measured): a plainly easy prompt starts on the edge, and a plainly hard one is
// never answered by the edge unchecked: it goes to the cloud at once when the classifier is
// surest, else to the cascade, which escalates when the edge is unsure.
TEST_P(PromptPairs, TheDefaultConfigurationSendsEachSideWhereItBelongs) {
  auto router = Router::create(config::RoutingConfig{});
  ASSERT_TRUE(router) << router.error().message;
  std::map<std::string, Tally> easy_on_edge;
  std::map<std::string, Tally> hard_direct;
  for (const auto& pair : load_pairs(GetParam().path)) {
    const Decision easy = decide_default(*router.value(), pair.easy);
    const Decision hard = decide_default(*router.value(), pair.hard);
    Tally& edge = easy_on_edge[pair.lang];
    ++edge.pairs;
    edge.ordered += easy.tier == Tier::kEdge ? 1 : 0;
    Tally& direct = hard_direct[pair.lang];
    ++direct.pairs;
    direct.ordered += hard.tier == Tier::kCloud ? 1 : 0;
    // Private data keeps a request on the device whatever its difficulty (the privacy rule
    // decides first): the pasted logs and configurations of the code and security sets carry IP
    // addresses and card numbers.
    const bool kept_private = !hard.cloud_allowed && hard.tier == Tier::kEdge;
    EXPECT_TRUE(hard.tier == Tier::kCloud || hard.pattern == Pattern::kCascade || kept_private)
        << "hard " << pair.id << " would be answered by the edge unchecked";
    // The gate is narrow enough never to take an easy prompt past the edge.
    EXPECT_NE(easy.tier, Tier::kCloud) << "easy " << pair.id << " went straight to the cloud";
  }
  for (const auto& [lang, tally] : easy_on_edge) {
    // Measured: every easy prompt on the edge in both languages and every file; in the
    // golden: of the hard ones, 9 of 54 English and 19 of 54 Chinese go straight to the cloud
    // (the rest through the cascade); the fresh sets' figures are in docs/ROUTING_QUALITY.md.
    std::cout << lang << ": easy on the edge " << tally.ordered << " of " << tally.pairs
              << ", hard straight to the cloud " << hard_direct[lang].ordered << " of "
              << hard_direct[lang].pairs << "\n";
    EXPECT_GE(tally.ordered * 10, tally.pairs * 9) << lang << " easy prompts on the edge";
  }
}

// The golden pairs (108, 6 per family and language), the fresh sets (the first four 108 pairs
// each, the fifth 60: 10 per language with the easy prompt the longer; the two on the size of
// the answer asked for, 80 and 60; the one of hard requests asked as plain questions, 60, held
// to 8 in 10: it was ordered 24 and 28 of 30 when first scored; the one of requests that carry
// code, logs or configuration, 120, ordered 57 and 59 of 60 when first scored, length 31 and 34;
// the one on security, 60, whose easy sides use the same words, 30 and 29 of 30, length 18 and
// 19), and the multilingual
// sets (18, 12, 18, 12, 18, 18, 12 and 12 pairs per language; the sixth and seventh, in
// Hebrew, Bengali, Urdu, Swahili and Greek, held to 3 in 4, and the eighth, in Tamil, Telugu,
// Marathi, Gujarati and Punjabi, to 2 in 3: what they score less nothing, ROUTING_QUALITY.md;
// the ninth and tenth, 6 pairs per language, to 2 in 3: the tenth's hard prompts name no task,
// and it was ordered 40 of 48 when first scored, length 24).
INSTANTIATE_TEST_SUITE_P(
    Files, PromptPairs,
    ::testing::Values(PairFile{"tests/routing/cases/golden_pairs.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_2.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_3.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_4.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_5.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_length.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_length_2.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_questions.jsonl", 2, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_code.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_security.jsonl"},
                      PairFile{"bench/data/router_fresh_pairs_short.jsonl", 2, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_casual.jsonl", 2, 0.75},
                      PairFile{"bench/data/router_fresh_pairs_codeswitch.jsonl", 1},
                      PairFile{"bench/data/router_fresh_pairs_everyday.jsonl", 2, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_specialist.jsonl", 2, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual.jsonl", 8, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_2.jsonl", 8, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_3.jsonl", 8, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_4.jsonl", 8, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_5.jsonl", 2, 0.8},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_6.jsonl", 5, 0.75},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_7.jsonl", 5, 0.75},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_8.jsonl", 5, 0.65},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_9.jsonl", 8, 0.65},
                      PairFile{"bench/data/router_fresh_pairs_multilingual_10.jsonl", 8, 0.65}),
    [](const ::testing::TestParamInfo<PairFile>& file) { return test_name(file.param); });

// The two examples: the plainest cases go where the framework says, with no edge try
// for the hard one.
TEST(GoldenPairs, ThePlainestCasesAreDecidedAtIngress) {
  auto router = Router::create(config::RoutingConfig{});
  ASSERT_TRUE(router) << router.error().message;
  EXPECT_EQ(decide_default(*router.value(), "Yes or no: is water wet?").tier, Tier::kEdge);
  EXPECT_EQ(decide_default(*router.value(),
                           "Prove that there are infinitely many primes p such that p+2 is also "
                           "prime, or explain precisely why this is open, then design a 5-step "
                           "research plan with risks for attacking it")
                .tier,
            Tier::kCloud);
}

}  // namespace
}  // namespace tandem::routing
