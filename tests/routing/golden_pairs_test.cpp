// Common sense as data: pairs of prompts where one is plainly harder than the other by the
// seeds' decision framework (tests/routing/cases/golden_pairs.jsonl, English and Chinese, every
// task family). They were written apart from the router and are never used to train or tune
// it (the cues, the prior and the task model learned from bench/data/router_dev_pairs*.jsonl,
// six sets by other authors): a check of what it learned, not a target it was fitted to.
//
// The goal is 9 in 10 ordered in each language. The shipped router orders 53 of 54 English
// and 53 of 54 Chinese pairs (98%); before the task model, 46 and 48 (85%, 89%).

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

std::vector<Pair> load_pairs() {
  std::vector<Pair> pairs;
  std::ifstream in(TANDEM_ROUTING_CASES "/golden_pairs.jsonl");
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

constexpr double kOrderedFloor = 0.9;

TEST(GoldenPairs, TheShippedRouterOrdersMostPairsInEachLanguage) {
  const auto pairs = load_pairs();
  ASSERT_GE(pairs.size(), 60u);
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
  ASSERT_EQ(by_lang.size(), 2u) << "English and Chinese";
  for (const auto& [lang, tally] : by_lang) {
    const double share = static_cast<double>(tally.ordered) / static_cast<double>(tally.pairs);
    std::cout << lang << ": " << tally.ordered << " of " << tally.pairs << " ordered\n";
    RecordProperty("ordered_" + lang, std::to_string(share));
    EXPECT_GE(share, kOrderedFloor) << lang << ": " << tally.ordered << " of " << tally.pairs;
  }
}

// With the default configuration, where the decision lands: plainly hard prompts on the cloud,
// plainly easy ones on the edge (the cascade, which starts there).
TEST(GoldenPairs, TheDefaultConfigurationSendsEachSideWhereItBelongs) {
  auto router = Router::create(config::RoutingConfig{});
  ASSERT_TRUE(router) << router.error().message;
  std::map<std::string, Tally> easy_on_edge;
  std::map<std::string, Tally> hard_on_cloud;
  HealthSnapshot health;
  for (const auto& pair : load_pairs()) {
    for (bool hard : {false, true}) {
      RouteInput input;
      input.text = hard ? pair.hard : pair.easy;
      input.prompt.last_user = input.text;
      input.prompt.total_chars = input.text.size();
      const Decision decision = router.value()->decide(router.value()->signals(input), health);
      Tally& tally = (hard ? hard_on_cloud : easy_on_edge)[pair.lang];
      ++tally.pairs;
      const Tier wanted = hard ? Tier::kCloud : Tier::kEdge;
      if (decision.tier == wanted) {
        ++tally.ordered;
      } else {
        std::cout << (hard ? "hard " : "easy ") << pair.id << " went to "
                  << tier_name(decision.tier) << "\n";
      }
    }
  }
  for (const auto& [lang, tally] : easy_on_edge) {
    std::cout << lang << ": easy on the edge " << tally.ordered << " of " << tally.pairs
              << ", hard on the cloud " << hard_on_cloud[lang].ordered << " of "
              << hard_on_cloud[lang].pairs << "\n";
    // Measured: English 52 and 46 of 54, Chinese 53 and 50 of 54 (before the task model:
    // 44 and 38, 49 and 43).
    EXPECT_GE(tally.ordered * 10, tally.pairs * 9) << lang << " easy prompts on the edge";
    EXPECT_GE(hard_on_cloud[lang].ordered * 10, hard_on_cloud[lang].pairs * 8)
        << lang << " hard prompts on the cloud";
  }
}

}  // namespace
}  // namespace tandem::routing
