// Each part of the decision record, field by field: its JsonWriter text against the JSON the
// gateway built with nlohmann::json before the parts were native (the `expected` values below
// are built the way that code built them: the same keys, the same number kinds).

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "server/decision_parts_json.h"
#include "server/responses.h"

namespace tandem::server {
namespace {

using nlohmann::json;

template <typename Part>
std::string text_of(const Part& part) {
  std::string text;
  JsonWriter out(text);
  write_json(out, part);
  return text;
}

// The text nlohmann::json writes for `expected`, as the record wrote its parts.
template <typename Part>
void expect_written_as(const Part& part, const json& expected) {
  EXPECT_EQ(text_of(part), dump(expected));
}

TEST(DecisionPartsTest, Confidence) {
  ConfidencePart part{routing::ConfidenceSnapshot{17, -0.42, -3.125, 0.9, 2.3, 0.61}, 0.5};
  const routing::ConfidenceSnapshot& s = part.snapshot;
  const json expected = {{"tokens", s.tokens},
                         {"mean_logprob", s.mean_logprob},
                         {"min_logprob", s.min_logprob},
                         {"mean_entropy", s.mean_entropy},
                         {"mean_margin", s.mean_margin},
                         {"combined", s.combined},
                         {"threshold", 0.5}};
  expect_written_as(part, expected);
  EXPECT_EQ(json::parse(text_of(part))["tokens"], 17);

  // Before any token: integral values stay floats, a non-finite one is null, as nlohmann wrote.
  ConfidencePart empty{routing::ConfidenceSnapshot{}, 1.0};
  empty.snapshot.min_logprob = -std::numeric_limits<double>::infinity();
  const json expected_empty = {
      {"tokens", size_t{0}}, {"mean_logprob", 0.0}, {"min_logprob", empty.snapshot.min_logprob},
      {"mean_entropy", 0.0}, {"mean_margin", 0.0},  {"combined", 1.0},
      {"threshold", 1.0}};
  expect_written_as(empty, expected_empty);
  EXPECT_NE(text_of(empty).find("\"combined\":1.0"), std::string::npos);
  EXPECT_NE(text_of(empty).find("\"min_logprob\":null"), std::string::npos);
}

TEST(DecisionPartsTest, Escalation) {
  EscalationPart part;
  part.reason = "edge confidence 0.610000 < 0.700000";
  part.early_stop = true;
  part.prefix_decision = false;
  part.at_token = 9;
  part.edge_tokens_discarded = 12;
  json expected = {{"reason", part.reason},
                   {"early_stop", true},
                   {"prefix_decision", false},
                   {"at_token", size_t{9}},
                   {"edge_tokens_discarded", 12}};
  expect_written_as(part, expected);  // review off: no cloud_confidence at all

  part.cloud_confidence = JudgedConfidence{0.27};
  expected["cloud_confidence"] = 0.27;
  expect_written_as(part, expected);

  part.cloud_confidence = JudgedConfidence{std::nullopt};  // the cloud sent no logprobs
  expected["cloud_confidence"] = nullptr;
  expect_written_as(part, expected);
}

TEST(DecisionPartsTest, VerificationByEveryJudge) {
  VerificationPart unverified{"match", "unverified", "no verdict", std::nullopt, std::nullopt};
  expect_written_as(unverified,
                    {{"judge", "match"}, {"status", "unverified"}, {"error", "no verdict"}});

  VerificationPart agreed{"match", "agreed", std::nullopt, std::nullopt, std::nullopt};
  expect_written_as(agreed, {{"judge", "match"}, {"status", "agreed"}});

  VerificationPart confident{"confidence", "disagreed", std::nullopt, JudgedConfidence{0.92},
                             std::nullopt};
  expect_written_as(confident,
                    {{"judge", "confidence"}, {"status", "disagreed"}, {"cloud_confidence", 0.92}});
  confident.cloud_confidence = JudgedConfidence{std::nullopt};
  confident.status = "agreed";
  expect_written_as(confident,
                    {{"judge", "confidence"}, {"status", "agreed"}, {"cloud_confidence", nullptr}});

  VerificationPart prompt{"prompt", "disagreed_unrevised", "upstream timed out", std::nullopt,
                          "No, it is \xff wrong."};
  expect_written_as(prompt, {{"judge", "prompt"},
                             {"cloud_reply", "No, it is \xff wrong."},
                             {"status", "disagreed_unrevised"},
                             {"error", "upstream timed out"}});
}

TEST(DecisionPartsTest, Revision) {
  const Revision revision{"rev-2", "edge", "cloud", "the cloud disagreed \"badly\""};
  expect_written_as(revision, revision.to_json());
  expect_written_as(revision, {{"id", "rev-2"},
                               {"from_tier", "edge"},
                               {"to_tier", "cloud"},
                               {"reason", "the cloud disagreed \"badly\""}});
}

TEST(DecisionPartsTest, Collaboration) {
  CollaborationPart part;
  part.handoffs = 2;
  part.edge_tokens = 30;
  part.cloud_tokens = 8;
  part.entropy_threshold = 2.5;
  part.segments = {{"edge", 20, CollaborationSegment::EdgePrompt{40, 5}},
                   {"cloud", 8, std::nullopt},
                   {"edge", 10, CollaborationSegment::EdgePrompt{48, 0}}};
  json segments = json::array();
  segments.push_back(
      {{"tier", "edge"}, {"tokens", 20}, {"cached_prompt_tokens", 5}, {"prompt_tokens", 40}});
  segments.push_back({{"tier", "cloud"}, {"tokens", 8}});
  segments.push_back(
      {{"tier", "edge"}, {"tokens", 10}, {"cached_prompt_tokens", 0}, {"prompt_tokens", 48}});
  json expected = {{"handoffs", uint32_t{2}},  {"edge_tokens", 30},    {"cloud_tokens", 8},
                   {"entropy_threshold", 2.5}, {"segments", segments}, {"cloud_failure", nullptr}};
  expect_written_as(part, expected);

  part.cloud_failure = "upstream: timeout";
  expected["cloud_failure"] = "upstream: timeout";
  expect_written_as(part, expected);

  CollaborationPart alone;  // the edge wrote everything without a hand-off
  alone.entropy_threshold = 3.0;
  expect_written_as(alone, {{"handoffs", uint32_t{0}},
                            {"edge_tokens", 0},
                            {"cloud_tokens", 0},
                            {"entropy_threshold", 3.0},
                            {"segments", json::array()},
                            {"cloud_failure", nullptr}});
}

TEST(DecisionPartsTest, ReviewPendingAndAnswered) {
  ReviewPart pending{"rt_9", "pending_review", "the prompt matches review rule legal",
                     "/v1/tandem/reviews/rt_9", std::nullopt};
  expect_written_as(pending, {{"ticket", "rt_9"},
                              {"status", "pending_review"},
                              {"reason", "the prompt matches review rule legal"},
                              {"poll", "/v1/tandem/reviews/rt_9"}});

  ReviewPart answered{"rt_9", "answered", std::nullopt, std::nullopt, ""};
  expect_written_as(answered, {{"ticket", "rt_9"}, {"status", "answered"}, {"reviewer", ""}});
  answered.reviewer = "ana";
  expect_written_as(answered, {{"ticket", "rt_9"}, {"status", "answered"}, {"reviewer", "ana"}});
}

TEST(DecisionPartsTest, Consistency) {
  ConsistencyPart part{"acme", false, std::nullopt};
  json expected = {{"client", "acme"}, {"used", false}};
  expect_written_as(part, expected);

  part.used = true;
  part.without_memory = ConsistencyPart::Override{true, "edge"};
  expected["used"] = true;
  expected["overrode"] = true;
  expected["would_have_been"] = "edge";
  expect_written_as(part, expected);
}

TEST(DecisionPartsTest, ShadowInEveryState) {
  ShadowPart unsampled{false, "cascade", std::nullopt, std::nullopt};
  expect_written_as(unsampled, {{"sampled", false}, {"would_have_been", "cascade"}});

  for (const char* status : {"pending", "cloud_failed", "cancelled", "edge_busy"}) {
    ShadowPart part{true, "edge", status, std::nullopt};
    expect_written_as(part, {{"sampled", true}, {"would_have_been", "edge"}, {"status", status}});
  }

  ShadowPart compared{true, "cascade", "compared", ShadowPart::Comparison{false, 0.4}};
  expect_written_as(compared, {{"sampled", true},
                               {"would_have_been", "cascade"},
                               {"status", "compared"},
                               {"agreed", false},
                               {"f1", 0.4}});
  compared.comparison = ShadowPart::Comparison{true, 1.0};
  EXPECT_NE(text_of(compared).find("\"f1\":1.0"), std::string::npos);
}

}  // namespace
}  // namespace tandem::server
