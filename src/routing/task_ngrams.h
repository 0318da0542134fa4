#pragma once
// Hashed word and character n-grams of a prompt: the input of the task model (task_model.h).
// English and other space-separated scripts give lower-cased word unigrams and bigrams; Chinese
// and Japanese give character unigrams and bigrams (no word segmentation needed); digits fold
// to one token, punctuation breaks bigrams. Each n-gram is hashed into one of kNgramBuckets.
//
// Only the first and the last kNgramWindowBytes of a longer prompt are read: that is where the
// instruction is (what is pasted between is the material, not the task), and it bounds the
// cost at any length. Within them, the request's n-grams (request_spans.h) can count several
// times each, so that a long pasted text does not outvote a short request.
//
// Thread-safety: NgramVector is a per-caller buffer; the functions are pure.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "routing/request_spans.h"

namespace tandem::routing {

inline constexpr size_t kNgramBuckets = size_t{1} << 16;
inline constexpr size_t kNgramWindowBytes = kRequestWindowBytes;
// How many times a request n-gram counts (request_spans.h; the material's count once). 1 counts
// every n-gram alike, without looking for the request: the models before the weight existed.
inline constexpr uint16_t kDefaultRequestWeight = 3;
inline constexpr uint16_t kMaxRequestWeight = 16;

// A sparse vector: distinct buckets, each with log(1 + count), scaled to unit L2 norm (a
// prompt's length is for the other features to weigh; this one says what kind of task it is).
struct NgramVector {
  std::vector<uint32_t> buckets;
  std::vector<float> values;
};

// Fills `out` (reusing its capacity: no allocation once warm) with the text's n-grams, the
// request's counted `request_weight` times (1 to kMaxRequestWeight). Any bytes are accepted;
// invalid UTF-8 decodes one byte at a time.
void hashed_ngrams(std::string_view text, uint16_t request_weight, NgramVector& out);
// The same, from the prompt's request already found (find_prompt_request).
void hashed_ngrams(const PromptRequest& request, uint16_t request_weight, NgramVector& out);

}  // namespace tandem::routing
