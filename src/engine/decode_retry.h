#pragma once
// One generation step's tokens decoded in as few llama_decode calls as fit, and what happens
// when a call fails. llama.cpp can fail a call for the batch as a whole (no room in the KV
// cache, a compute buffer it cannot allocate for this many tokens) or because of one
// sequence's tokens. A failed call is retried with half as many tokens, and again, until the
// failing call holds one token of one request: only that request fails, every other request
// in the step goes on. Kept apart from llama.h so the retry rule is tested on its own.

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tandem::engine {

// One request's tokens in a step: its sampled token, or a chunk of its prompt.
struct DecodePart {
  size_t owner = 0;  // who the tokens belong to (the engine's slot index)
  size_t count = 0;  // tokens, in order
};

// The tokens [offset, offset + count) of parts[part] in one llama_decode call.
struct DecodePiece {
  size_t part = 0;
  size_t offset = 0;
  size_t count = 0;
};

struct DecodeCalls {
  // Decodes the pieces together; llama_decode's return code (0: success). On failure it must
  // leave the KV cache as it was before the call (the engine removes what the call added).
  std::function<int(std::span<const DecodePiece>)> decode;
  // After a successful call: the pieces' tokens are in the KV cache and their logits ready.
  std::function<void(std::span<const DecodePiece>)> decoded;
  // `owner` caused a failure (its single token failed alone) and gets no more calls.
  std::function<void(size_t owner, int code)> failed;
};

// Decodes every part, in order, in calls of at most `max_tokens` tokens (a part may be split
// across calls). Returns the number of failed llama_decode calls (0 when all went well).
size_t decode_with_retry(std::span<const DecodePart> parts, size_t max_tokens,
                         const DecodeCalls& calls);

}  // namespace tandem::engine
