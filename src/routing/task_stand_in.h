#pragma once
// What stands in for the task model's n-grams on text it was not trained to read. The task
// model learned English and Chinese n-grams; on a prompt in another language it sees words it
// never weighed, and its logit falls back to its bias, which reads as "easy": no plainly hard
// request in such a language could then clear the ingress gate. The stand-in is what the task
// model would have said, predicted from the language-free features of the same prompt (the
// task cues, which are counted in thirty languages), fitted by `tandem router train-task` on
// the pairs the model was trained on. How much of a prompt the model reads is the share of its
// n-gram vector (unit length) that falls in buckets the training weighed: at `chance` or below
// (what unread words reach by hash collisions alone) the stand-in speaks, at `full` or above
// (what held-out English and Chinese prompts reach) the n-grams do, and between, a mix.
//
// Thread-safety: immutable after construction; safe from any thread.

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "routing/prompt_features.h"

namespace tandem::routing {

// A bucket counts as weighed by the training at this magnitude: about 40% of the buckets the
// English and Chinese pairs touch; the rest are the long tail of rare n-grams.
inline constexpr float kReadWeight = 0.05f;

struct TaskStandIn {
  double chance = 0;  // the read share an unread text reaches: the weighed buckets' share
  double full = 1;    // the read share from which the n-grams alone decide
  double bias = 0;
  std::vector<std::pair<uint8_t, double>> weights;  // feature id, weight on its raw value

  // bias + weights · values.
  double predict(const std::array<float, kFeatureCount>& values) const;
  // 0 (unread) to 1 (read): where `read_share` lies between chance and full.
  double reading(double read_share) const;

  // {chance, full, bias, weights: {feature: weight}}; parse names what is wrong and where.
  nlohmann::ordered_json to_json() const;
  static Result<TaskStandIn> parse(const nlohmann::json& value, std::string_view source);
};

}  // namespace tandem::routing
