// The router's prompt features over arbitrary prompt bytes (invalid UTF-8 included): the cue
// scan and the task model's hashed n-grams, whose fast paths (runs of ASCII letters, runs of
// Chinese ideographs, the n-gram counter that stores without bounds checks, the request spans
// that weigh the request above its material) read every request's text. The contracts of
// prompt_features.h, task_ngrams.h and request_spans.h are checked on every input, and the
// ideograph, letter and Thai fast paths against the general UTF-8 decoder at every offset; the
// answer size a request names (requested_length.h) and the part of a system prompt read as the
// app's task (system_task.h) on every input.

#include "routing/prompt_features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <unordered_set>

#include "common/utf8.h"
#include "fuzz/fuzz_targets.h"
#include "fuzz/property_check.h"
#include "routing/prompt_code_points.h"
#include "routing/prompt_cues_th.h"
#include "routing/request_spans.h"
#include "routing/requested_length.h"
#include "routing/system_task.h"
#include "routing/task_model.h"
#include "routing/task_ngrams.h"
#include "routing/thread_task.h"

namespace tandem::fuzz {
namespace {

using routing::feature_names;
using routing::kFeatureCount;
using routing::kNgramBuckets;
using routing::kNgramWindowBytes;
using routing::NgramVector;
using routing::PromptFeatures;

bool is_ratio(std::string_view name) {
  return name.size() > 6 && name.substr(name.size() - 6) == "_ratio";
}

// Every value finite; ratios in [0, 1]; counts (log1p) non-negative; the capped and clipped
// ones within their caps (prompt_features.h, docs/ROUTER_TRAINING.md).
void check_values(const PromptFeatures& features) {
  for (size_t i = 0; i < kFeatureCount; ++i) {
    const float v = features.values[i];
    const std::string name(feature_names()[i]);
    FUZZ_CHECK_MSG(std::isfinite(v), name);
    if (name == "task_ngrams") {
      FUZZ_CHECK_MSG(v >= -12.0f && v <= 12.0f, name + " = " + std::to_string(v));
    } else if (is_ratio(name)) {
      FUZZ_CHECK_MSG(v >= 0.0f && v <= 1.0f, name + " = " + std::to_string(v));
    } else if (name == "avg_word_length") {
      FUZZ_CHECK_MSG(v >= 0.0f && v <= 30.0f, name + " = " + std::to_string(v));
    } else {
      FUZZ_CHECK_MSG(v >= 0.0f, name + " = " + std::to_string(v));
    }
  }
}

// Distinct buckets in range, one positive value each, unit L2 norm (or nothing at all).
void check_ngrams(const NgramVector& ngrams) {
  FUZZ_CHECK(ngrams.buckets.size() == ngrams.values.size());
  std::unordered_set<uint32_t> seen;
  double norm = 0;
  for (size_t i = 0; i < ngrams.buckets.size(); ++i) {
    FUZZ_CHECK(ngrams.buckets[i] < kNgramBuckets);
    FUZZ_CHECK_MSG(seen.insert(ngrams.buckets[i]).second,
                   "bucket " + std::to_string(ngrams.buckets[i]) + " twice");
    FUZZ_CHECK(ngrams.values[i] > 0.0f && std::isfinite(ngrams.values[i]));
    norm += static_cast<double>(ngrams.values[i]) * ngrams.values[i];
  }
  if (!ngrams.buckets.empty()) {
    FUZZ_CHECK_MSG(std::abs(norm - 1.0) < 1e-3, "norm " + std::to_string(norm));
  }
}

// The ideograph and kana fast paths answer exactly where the general decoder reads a three-byte
// U+4E00..U+9FFF or U+3040..U+30FF, with the same code point.
void check_ideograph_decoding(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    uint32_t cp = 0;
    const size_t length = decode_utf8(text, i, cp);
    const bool ideograph = length == 3 && cp >= 0x4e00 && cp <= 0x9fff;
    FUZZ_CHECK_MSG(common_ideograph_at(text, i) == (ideograph ? cp : 0),
                   "at offset " + std::to_string(i));
    const bool kana = length == 3 && cp >= 0x3040 && cp <= 0x30ff;
    FUZZ_CHECK_MSG(kana_at(text, i) == (kana ? cp : 0), "kana at offset " + std::to_string(i));
  }
}

// Whether the general decoder's `cp` of `length` bytes is a letter the cue scan's word loop
// reads itself (prompt_code_points.h): accented Latin, Cyrillic, Hebrew, Arabic, the Indic
// scripts, Vietnamese.
bool is_vocabulary_letter(uint32_t cp, size_t length) {
  if (length == 2) {
    const bool latin_cyrillic =
        cp >= 0xc0 && cp < 0x530 && cp != 0xd7 && cp != 0xf7 && (cp < 0x370 || cp > 0x3ff);
    const bool hebrew_point =
        cp >= 0x591 && cp <= 0x5c7 && cp != 0x5be && cp != 0x5c0 && cp != 0x5c3 && cp != 0x5c6;
    const bool hebrew = (cp >= 0x5d0 && cp <= 0x5ea) || (cp >= 0x5ef && cp <= 0x5f2);
    const bool arabic = (cp >= 0x620 && cp <= 0x65f) || (cp >= 0x66e && cp <= 0x6d3) || cp == 0x6d5;
    return latin_cyrillic || hebrew_point || hebrew || arabic;
  }
  const bool indic = cp >= 0x900 && cp <= 0xdff && cp != 0x964 && cp != 0x965;
  return length == 3 && (indic || (cp >= 0x1e00 && cp <= 0x1eff));
}

// Whether it is a letter of modern Greek (greek_letter_at).
bool is_greek_letter(uint32_t cp, size_t length) {
  const bool accented = cp == 0x386 || (cp >= 0x388 && cp <= 0x38a) || cp == 0x38c;
  return length == 2 && (accented || (cp >= 0x38e && cp <= 0x3ce && cp != 0x3a2));
}

// The word loop's letter readers answer exactly where the general decoder reads such a letter,
// with the same code point; Greek and Thai letters likewise.
void check_letter_decoding(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    uint32_t cp = 0;
    const size_t length = decode_utf8(text, i, cp);
    FUZZ_CHECK_MSG(routing::prompt_detail::vocabulary_letter_at(text, i) ==
                       (is_vocabulary_letter(cp, length) ? cp : 0),
                   "letter at offset " + std::to_string(i));
    FUZZ_CHECK_MSG(
        routing::prompt_detail::greek_letter_at(text, i) == (is_greek_letter(cp, length) ? cp : 0),
        "Greek letter at offset " + std::to_string(i));
    FUZZ_CHECK_MSG(routing::prompt_detail::thai_letter_at(text, i) ==
                       (length == 3 && routing::prompt_detail::is_thai_letter(cp)),
                   "Thai letter at offset " + std::to_string(i));
  }
}

bool same(const NgramVector& a, const NgramVector& b) {
  return a.buckets == b.buckets && a.values == b.values;
}

bool same_buckets(const NgramVector& a, const NgramVector& b) {
  return std::unordered_set<uint32_t>(a.buckets.begin(), a.buckets.end()) ==
         std::unordered_set<uint32_t>(b.buckets.begin(), b.buckets.end());
}

// Non-empty spans inside the text, in order, never overlapping.
void check_request_spans(std::string_view text) {
  for (const bool first : {false, true}) {
    for (const bool last : {false, true}) {
      const routing::RequestSpans request = routing::find_request_spans(text, first, last);
      FUZZ_CHECK(request.count <= routing::RequestSpans::kCapacity);
      size_t previous_end = 0;
      for (size_t i = 0; i < request.count; ++i) {
        const routing::TextSpan span = request.spans[i];
        FUZZ_CHECK_MSG(
            previous_end <= span.begin && span.begin < span.end && span.end <= text.size(),
            "span " + std::to_string(i) + ": " + std::to_string(span.begin) + ".." +
                std::to_string(span.end));
        previous_end = span.end;
      }
    }
  }
}

// The answer size asked for: finite, not negative, the same read from the text or from its
// request found once, and the feature its log step (requested_length.h).
void check_requested_length(std::string_view text, const PromptFeatures& features) {
  const double words = routing::requested_answer_words(text);
  FUZZ_CHECK_MSG(std::isfinite(words) && words >= 0, std::to_string(words));
  FUZZ_CHECK(routing::requested_answer_words(routing::find_prompt_request(text)) == words);
  const double value = routing::requested_length_value(text);
  FUZZ_CHECK(value == std::log1p(std::max(0.0, words - 200) / 1000));
  FUZZ_CHECK(features.values[routing::feature_index("requested_length")] ==
             static_cast<float>(value));
}

// The input as a conversation: its first half the earlier turn, its second the follow-up. One
// prompt has no thread; with one, the feature is the thread_task.h value, within its bounds.
void check_thread_task(std::string_view text, const PromptFeatures& single) {
  FUZZ_CHECK(single.values[routing::feature_index("thread_task")] == 0.0f);
  const std::string_view earlier_turn = text.substr(0, text.size() / 2);
  const std::string_view last = text.substr(text.size() / 2);
  const std::array<std::string_view, 1> earlier = {earlier_turn};
  routing::PromptView view;
  view.last_user = last;
  view.earlier_user = earlier;
  view.turns = 3;
  view.total_chars = text.size();
  const double value = routing::thread_task_value(earlier, last, routing::TaskModel::builtin());
  FUZZ_CHECK(std::isfinite(value) && value >= 0.0 && value <= routing::kTaskLogitLimit);
  FUZZ_CHECK(routing::extract_features(view).values[routing::feature_index("thread_task")] ==
             static_cast<float>(value));
}

// The input as an app's request: its first half the system prompt, its second the user
// message. The features stay finite and deterministic (the joined text lives in a buffer the
// thread keeps), and the system prompt's length is its own.
void check_system_head(std::string_view text) {
  routing::PromptView view;
  view.system = text.substr(0, text.size() / 2);
  view.last_user = text.substr(text.size() / 2);
  view.total_chars = text.size();
  const PromptFeatures features = routing::extract_features(view);
  check_values(features);
  FUZZ_CHECK(routing::extract_features(view).values == features.values);
  FUZZ_CHECK(features.values[routing::feature_index("log_system_chars")] ==
             static_cast<float>(std::log1p(view.system.size())));
  // What is read of the system prompt lies within it, and what follows a persona ends the text.
  const std::string_view task = routing::system_task(view.system, routing::TaskModel::builtin());
  FUZZ_CHECK(task.empty() ||
             (task.data() >= view.system.data() &&
              task.data() + task.size() <= view.system.data() + view.system.size()));
  const std::string_view rest = routing::after_persona(text);
  FUZZ_CHECK(rest.empty() || rest.data() + rest.size() == text.data() + text.size());
}

}  // namespace

void fuzz_prompt_features(const uint8_t* data, size_t size) {
  const std::string_view text = as_text(data, size);
  check_ideograph_decoding(text);
  check_letter_decoding(text);

  routing::PromptView view;
  view.last_user = text;
  view.total_chars = text.size();
  const PromptFeatures features = routing::extract_features(view);
  check_values(features);
  // The scan keeps no state between calls.
  FUZZ_CHECK(routing::extract_features(view).values == features.values);
  check_requested_length(text, features);
  check_thread_task(text, features);
  check_system_head(text);

  check_request_spans(text);
  NgramVector ngrams;
  routing::hashed_ngrams(text, routing::kDefaultRequestWeight, ngrams);
  check_ngrams(ngrams);
  // The per-thread counts are back to zero after each call: the same text counts the same.
  NgramVector again;
  routing::hashed_ngrams(text, routing::kDefaultRequestWeight, again);
  FUZZ_CHECK(same(ngrams, again));
  // Any weight: the same n-grams (the weight moves values only), no count overflows.
  NgramVector heaviest;
  routing::hashed_ngrams(text, routing::kMaxRequestWeight, heaviest);
  check_ngrams(heaviest);
  FUZZ_CHECK(same_buckets(ngrams, heaviest));
  NgramVector plain;
  routing::hashed_ngrams(text, 1, plain);
  check_ngrams(plain);

  // Only the first and the last KiB are read: what lies between changes nothing.
  if (text.size() > 2 * kNgramWindowBytes + 8) {
    std::string middle_changed(text);
    for (size_t i = kNgramWindowBytes + 4; i + kNgramWindowBytes + 4 < middle_changed.size(); ++i) {
      middle_changed[i] = 'x';
    }
    NgramVector windows;
    routing::hashed_ngrams(middle_changed, routing::kDefaultRequestWeight, windows);
    FUZZ_CHECK(same(ngrams, windows));
  }
}

}  // namespace tandem::fuzz
